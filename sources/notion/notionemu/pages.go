package notionemu

import (
	"net/http"
	"time"
)

func (s *Server) retrievePage(r *http.Request, token string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.lockedPage(r.PathValue("id"), token, "path failed validation: path.page_id")
	if err != nil {
		return nil, err
	}
	return p.objectJSON(), nil
}

// createPage adds a page to a database: {"parent":{"database_id":"…"},
// "properties":{…}}. Icons, covers and children are accepted and not kept.
func (s *Server) createPage(r *http.Request, token string) (any, error) {
	body, err := readObject(r, "parent", "properties", "children", "icon", "cover")
	if err != nil {
		return nil, err
	}
	parent, err := asObject(body["parent"], "body.parent")
	if err != nil {
		return nil, err
	}
	if err := parent.onlyKeys("body.parent", "type", "database_id"); err != nil {
		return nil, validationError("body failed validation: body.parent should have a database_id: notionemu emulates database pages only.")
	}
	dbID, err := asString(parent["database_id"], "body.parent.database_id")
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := s.lockedDatabase(dbID, token)
	if err != nil {
		return nil, err
	}
	updates, err := parseProperties(db, body["properties"])
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	s.seq++
	p := &page{
		id: newID(), db: db, seq: s.seq,
		created: now, edited: now, createdBy: s.bots[token], editedBy: s.bots[token],
		unique: db.nextUnique, values: make(map[*column]value, len(db.columns)),
	}
	db.nextUnique++
	for _, c := range db.columns {
		if !c.typ.modelled() {
			p.values[c] = value{raw: c.value}
		}
	}
	p.apply(updates)
	db.pages = append(db.pages, p)
	s.pages[p.id] = p
	return p.objectJSON(), nil
}

// updatePage changes properties and the trash flag: {"properties":{…},
// "archived":false}. Like Notion it refuses to edit a page in the trash
// unless the same request restores it.
func (s *Server) updatePage(r *http.Request, token string) (any, error) {
	body, err := readObject(r, "properties", "archived", "in_trash", "icon", "cover")
	if err != nil {
		return nil, err
	}
	trash, err := trashFlag(body)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.lockedPage(r.PathValue("id"), token, "path failed validation: path.page_id")
	if err != nil {
		return nil, err
	}
	var updates []propertyUpdate
	if raw, ok := body["properties"]; ok {
		if p.archived && (trash == nil || *trash) {
			return nil, validationError("Can't edit block that is archived. You must unarchive the block before editing.")
		}
		if updates, err = parseProperties(p.db, raw); err != nil {
			return nil, err
		}
	}
	p.apply(updates)
	if trash != nil {
		p.archived = *trash
	}
	p.edited, p.editedBy = s.stamp(), s.bots[token]
	return p.objectJSON(), nil
}

// trashFlag reads "archived" and its newer name "in_trash"; nil means the
// request leaves the page where it is.
func trashFlag(body object) (*bool, error) {
	var flag *bool
	for _, key := range []string{"archived", "in_trash"} {
		raw, ok := body[key]
		if !ok {
			continue
		}
		b, err := asBool(raw, "body."+key)
		if err != nil {
			return nil, err
		}
		if flag != nil && *flag != b {
			return nil, validationError("body failed validation: body.archived and body.in_trash disagree.")
		}
		flag = &b
	}
	return flag, nil
}

// stamp is the current time as Notion records it: rounded down to the
// minute.
func (s *Server) stamp() time.Time {
	return s.now().UTC().Truncate(time.Minute)
}
