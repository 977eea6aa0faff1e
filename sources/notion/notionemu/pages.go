package notionemu

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

func (s *Server) retrievePage(r *http.Request, token string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.lockedPage(r.PathValue("id"), token, "path failed validation: path.page_id")
	if err != nil {
		return nil, err
	}
	return p.objectJSON(r.Header.Get("Notion-Version")), nil
}

// createPage adds a page to a data source: {"parent":{"data_source_id":
// "…"},"properties":{…}} from 2025-09-03 on, or {"parent":{"database_id":
// "…"}}, which only a database with one data source accepts
// (https://developers.notion.com/reference/post-page). Icons, covers and
// children are accepted and not kept.
func (s *Server) createPage(r *http.Request, token string) (any, error) {
	body, err := readObject(r, "parent", "properties", "children", "icon", "cover")
	if err != nil {
		return nil, err
	}
	parent, err := asObject(body["parent"], "body.parent")
	if err != nil {
		return nil, err
	}
	if err := parent.onlyKeys("body.parent", "type", "database_id", "data_source_id"); err != nil {
		return nil, validationError("body failed validation: body.parent should have a database_id or a data_source_id: notionemu emulates database pages only.")
	}
	_, bySource := parent["data_source_id"]
	if bySource && !dataSources(r.Header.Get("Notion-Version")) {
		return nil, validationError("body failed validation: body.parent.data_source_id needs Notion-Version %s or later.", DataSourceVersion)
	}
	key, path := "database_id", "body.parent.database_id"
	if bySource {
		key, path = "data_source_id", "body.parent.data_source_id"
	}
	parentID, err := asString(parent[key], path)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var db *database
	if bySource {
		db, err = s.lockedDataSource(parentID, token)
	} else {
		var c *container
		if c, err = s.lockedDatabase(parentID, token); err == nil {
			db, err = c.sole()
		}
	}
	if err != nil {
		return nil, err
	}
	updates, err := parseProperties(db, body["properties"])
	if err != nil {
		return nil, err
	}
	if s.blockLimit > 0 && len(s.pages) >= s.blockLimit {
		return nil, blockLimitReached(s.blockLimit)
	}
	now := s.stamp()
	s.seq++
	p := &page{
		id: newID(), db: db, seq: s.seq,
		created: now, edited: now, createdBy: s.bots[token], editedBy: s.bots[token],
		unique: db.nextUnique, values: make(map[*column]value, len(db.columns)), shown: map[*column]json.RawMessage{},
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
	return p.objectJSON(r.Header.Get("Notion-Version")), nil
}

// updatePage changes properties and the trash flag: {"properties":{…},
// "archived":false}. Like Notion it refuses to edit a page in the trash
// unless the same request restores it.
func (s *Server) updatePage(r *http.Request, token string) (any, error) {
	body, err := readObject(r, "properties", "archived", "in_trash", "icon", "cover")
	if err != nil {
		return nil, err
	}
	if _, ok := body["archived"]; ok && r.Header.Get("Notion-Version") >= TrashVersion {
		// "Replace all uses of the archived field with in_trash in request
		// bodies" (https://developers.notion.com/docs/upgrade-guide-2026-03-11).
		return nil, validationError("body failed validation: body.archived is not a parameter from Notion-Version %s on; use body.in_trash.", TrashVersion)
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
	if s.collides(p) {
		return nil, newAPIError(http.StatusConflict, "conflict_error", "Conflict occurred while saving. Please try again.")
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
	p.edited, p.editedBy, p.written = s.stamp(), s.bots[token], time.Now()
	return p.objectJSON(r.Header.Get("Notion-Version")), nil
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

// SetBlockLimit makes the workspace a Free one with more than one member
// whose grace period has run out: once it holds n blocks (every page is
// one), a request that creates a block fails, while reads, edits and
// deletes go on (https://developers.notion.com/reference/workspace-block-limits,
// enforced by the REST API from 2026-09-08). Zero means no limit.
func (s *Server) SetBlockLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blockLimit = max(0, n)
}

// SetConflictWindow makes a page update answer 409 conflict_error when the
// page was last written less than d ago (wall clock), as Notion does when
// "the transaction could not be completed, potentially due to a data
// collision" (https://developers.notion.com/reference/status-codes). Zero
// turns it off.
func (s *Server) SetConflictWindow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflictWindow = d
}

// collides reports whether an update of p now collides with its last
// write; the caller holds s.mu.
func (s *Server) collides(p *page) bool {
	return s.conflictWindow > 0 && !p.written.IsZero() && time.Since(p.written) < s.conflictWindow
}

// retrieveProperty answers GET /v1/pages/{id}/properties/{property_id}
// with a property_item: a rollup as a list whose "property_item" carries
// the exact value, title and rich text as a list of one item per text
// object, any other type as one item
// (https://developers.notion.com/reference/retrieve-a-page-property).
func (s *Server) retrieveProperty(r *http.Request, token string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.lockedPage(r.PathValue("id"), token, "path failed validation: path.page_id")
	if err != nil {
		return nil, err
	}
	key := r.PathValue("property")
	c, ok := p.db.lookup(key)
	if !ok {
		c, ok = p.db.lookup(url.QueryEscape(key))
	}
	if !ok {
		return nil, notFound("property", key)
	}
	item := func(v any) map[string]any {
		return map[string]any{"object": "property_item", "id": c.id, "type": c.typ, string(c.typ): v}
	}
	list := func(results []any, last map[string]any) map[string]any {
		return map[string]any{"object": "list", "results": results, "next_cursor": nil, "has_more": false,
			"type": "property_item", "property_item": last}
	}
	switch c.typ {
	case TypeRollup:
		return list([]any{}, map[string]any{"id": c.id, "next_url": nil, "type": c.typ, "rollup": p.exactJSON(c, r.Header.Get("Notion-Version"))}), nil
	case TypeTitle, TypeRichText, TypePeople, TypeRelation:
		// One item per text object, user or page reference.
		parts, _ := p.exactJSON(c, r.Header.Get("Notion-Version")).([]any)
		results := make([]any, len(parts))
		for i, part := range parts {
			results[i] = item(part)
		}
		return list(results, map[string]any{"id": c.id, "next_url": nil, "type": c.typ, string(c.typ): map[string]any{}}), nil
	}
	return item(p.exactJSON(c, r.Header.Get("Notion-Version"))), nil
}
