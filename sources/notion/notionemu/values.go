package notionemu

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// value is one page's value for one column; which field is meaningful
// depends on the column's type.
type value struct {
	text     []richText      // title, rich_text
	number   *float64        // number; nil is empty
	option   *option         // select, status; nil is empty
	date     *dateValue      // date; nil is empty
	checkbox bool            // checkbox
	str      *string         // url, email, phone_number; nil is empty
	refs     []string        // people: user ids; relation: page ids
	raw      json.RawMessage // types the emulator does not model
}

type page struct {
	id        string
	db        *database
	seq       int // creation order: the last sort key, so every order is total
	created   time.Time
	edited    time.Time
	createdBy string
	editedBy  string
	archived  bool
	written   time.Time // last update, on the wall clock, for conflicts
	unique    int
	values    map[*column]value
	shown     map[*column]json.RawMessage // computed values the page object shows otherwise

}

// propertiesJSON renders the page's properties as Notion returns them,
// keyed by property name.
func (p *page) propertiesJSON(version string) map[string]any {
	out := make(map[string]any, len(p.db.columns))
	for _, c := range p.db.columns {
		prop := map[string]any{"id": c.id, "type": c.typ, string(c.typ): p.valueJSON(c, version)}
		if c.typ == TypeRelation {
			prop["has_more"] = len(p.values[c].refs) > shownReferences
		}
		out[c.name] = prop
	}
	return out
}

// valueJSON is the value as the page object shows it: at most 25 people
// or page references, and rollups computed over as many.
func (p *page) valueJSON(c *column, version string) any {
	if raw, ok := p.shown[c]; ok {
		return raw
	}
	return p.limitedJSON(c, shownReferences, version)
}

// exactJSON is the value as the page property endpoint sends it.
func (p *page) exactJSON(c *column, version string) any {
	return p.limitedJSON(c, maxReferences*maxReferences, version)
}

func (p *page) limitedJSON(c *column, limit int, version string) any {
	v := p.values[c]
	switch c.typ {
	case TypePeople:
		return p.db.peopleJSON(v.refs, limit, version)
	case TypeRelation:
		return relationJSON(v.refs, limit)
	case TypeRollup:
		if p.db.computes(c) {
			return p.rollupJSON(c, limit)
		}
	case TypeTitle, TypeRichText:
		return textArrayJSON(v.text)
	case TypeNumber:
		if v.number == nil {
			return nil
		}
		return *v.number
	case TypeSelect, TypeStatus:
		if v.option == nil {
			return nil
		}
		return *v.option
	case TypeDate:
		return v.date.json()
	case TypeCheckbox:
		return v.checkbox
	case TypeURL, TypeEmail, TypePhoneNumber:
		if v.str == nil {
			return nil
		}
		return *v.str
	case TypeUniqueID:
		return map[string]any{"prefix": nullable(c.prefix), "number": p.unique}
	case TypeCreatedTime:
		return notionTime(p.created)
	case TypeLastEditedTime:
		return notionTime(p.edited)
	}
	if v.raw == nil {
		return nil
	}
	return v.raw
}

func (p *page) cursor() string { return p.id }

// objectJSON renders the page as the page endpoints return it. From
// 2025-09-03 a database page's parent is its data source: {"type":
// "data_source_id", "data_source_id": …, "database_id": …}
// (https://developers.notion.com/reference/parent-object).
func (p *page) objectJSON(version string) map[string]any {
	parent := map[string]any{"type": "database_id", "database_id": p.db.container.id}
	if dataSources(version) {
		parent = map[string]any{"type": "data_source_id", "data_source_id": p.db.id, "database_id": p.db.container.id}
	}
	return trash(version, p.archived, map[string]any{
		"object":           "page",
		"id":               p.id,
		"created_time":     notionTime(p.created),
		"last_edited_time": notionTime(p.edited),
		"created_by":       userJSON(p.createdBy),
		"last_edited_by":   userJSON(p.editedBy),
		"cover":            nil,
		"icon":             nil,
		"parent":           parent,
		"properties":       p.propertiesJSON(version),
		"url":              notionURL(p.id),
		"public_url":       nil,
	})
}

func userJSON(id string) map[string]any {
	return map[string]any{"object": "user", "id": id}
}

// propertyUpdate is a validated property value from a request, applied only
// once every property in the request has validated, so that a rejected
// request changes nothing (not even a select's options).
type propertyUpdate struct {
	column *column
	value  value
}

// parseProperties validates a request's "properties" object against the
// database schema.
func parseProperties(db *database, raw json.RawMessage) ([]propertyUpdate, error) {
	props, err := asObject(raw, "body.properties")
	if err != nil {
		return nil, err
	}
	updates := make([]propertyUpdate, 0, len(props))
	for _, key := range slices.Sorted(maps.Keys(props)) {
		c, ok := db.lookup(key)
		if !ok {
			return nil, validationError("%s is not a property that exists.", key)
		}
		v, err := parseValue(db, c, props[key], "body.properties."+key)
		if err != nil {
			return nil, err
		}
		updates = append(updates, propertyUpdate{c, v})
	}
	return updates, nil
}

// parseValue validates a property value object such as
// {"select": {"name": "READY"}}; "id" and a matching "type" may accompany
// the value, as in the objects Notion itself returns.
func parseValue(db *database, c *column, raw json.RawMessage, path string) (value, error) {
	o, err := asObject(raw, path)
	if err != nil {
		return value{}, err
	}
	if t, ok := o["type"]; ok {
		if s, err := asString(t, path+".type"); err != nil || s != string(c.typ) {
			return value{}, validationError("%s is expected to be %s.", c.name, c.typ)
		}
	}
	var keys []string
	for k := range o {
		if k != "id" && k != "type" {
			keys = append(keys, k)
		}
	}
	if len(keys) != 1 || keys[0] != string(c.typ) {
		return value{}, validationError("%s is expected to be %s.", c.name, c.typ)
	}
	if !c.typ.writable() {
		return value{}, validationError("Cannot update %s: %s properties are read-only.", c.name, c.typ)
	}
	path += "." + string(c.typ)
	return parseTyped(db, c, o[string(c.typ)], path)
}

func parseTyped(db *database, c *column, raw json.RawMessage, path string) (value, error) {
	var v value
	var err error
	switch c.typ {
	case TypeTitle, TypeRichText:
		v.text, err = parseTextArray(raw, path)
	case TypeNumber:
		if !isNull(raw) {
			var n float64
			n, err = asNumber(raw, path)
			v.number = &n
		}
	case TypeSelect, TypeStatus:
		v.option, err = parseOption(c, raw, path)
	case TypeDate:
		v.date, err = parseDate(raw, path)
	case TypePeople:
		v.refs, err = parsePeople(db, raw, path)
	case TypeRelation:
		v.refs, err = parseRelation(db, raw, path)
	case TypeCheckbox:
		v.checkbox, err = asBool(raw, path)
	case TypeURL, TypeEmail, TypePhoneNumber:
		if !isNull(raw) {
			var s string
			if s, err = asString(raw, path); err == nil && len([]rune(s)) > maxTextContent {
				err = validationError("body failed validation: %s.length should be ≤ `%d`.", path, maxTextContent)
			}
			v.str = &s
		}
	default:
		err = fmt.Errorf("notionemu: no parser for writable type %s", c.typ)
	}
	return v, err
}

// parseOption validates {"name": …} or {"id": …}; null clears. An option
// named but not in a select's schema is created when the update applies,
// as Notion does; status options must exist.
func parseOption(c *column, raw json.RawMessage, path string) (*option, error) {
	if isNull(raw) {
		return nil, nil
	}
	o, err := asObject(raw, path)
	if err != nil {
		return nil, err
	}
	if err := o.onlyKeys(path, "id", "name", "color"); err != nil {
		return nil, err
	}
	if rawID, ok := o["id"]; ok {
		id, err := asString(rawID, path+".id")
		if err != nil {
			return nil, err
		}
		for _, opt := range c.options {
			if opt.ID == id {
				return &opt, nil
			}
		}
		return nil, validationError("body failed validation: %s.id `%s` is not an option of %s.", path, id, c.name)
	}
	name, err := asString(o["name"], path+".name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, validationError("body failed validation: %s.name should be a non-empty string; to clear %s send null.", path, c.name)
	}
	if existing, ok := c.option(name); ok {
		return &existing, nil
	}
	if c.typ == TypeStatus {
		return nil, validationError("Invalid status option. Status option \"%s\" does not exist\".", name)
	}
	probe := column{options: slices.Clone(c.options)}
	if _, err := probe.addOption(name); err != nil {
		return nil, validationError("body failed validation: %s.name: %v.", path, err)
	}
	return &option{Name: name}, nil
}

// apply writes validated updates into the page, creating the select
// options they name.
func (p *page) apply(updates []propertyUpdate) {
	for _, u := range updates {
		if u.value.option != nil && u.value.option.ID == "" {
			created, _ := u.column.addOption(u.value.option.Name) // validated by parseOption
			u.value.option = &created
		}
		before := p.values[u.column].refs
		p.values[u.column] = u.value
		if u.column.typ == TypeRelation {
			p.syncRelation(u.column, before, u.value.refs)
		}
	}
}
