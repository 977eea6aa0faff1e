package notionemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"slices"
	"strings"
	"time"
)

// PropertyType is a Notion property type as the API names it.
type PropertyType string

// The property types whose values the emulator stores, validates, filters
// and sorts. Any other type (rollup, formula, button, unsupported, …) can be
// declared too: it is read-only and every page shows Property.Value for it.
const (
	TypeTitle          PropertyType = "title"
	TypeRichText       PropertyType = "rich_text"
	TypeNumber         PropertyType = "number"
	TypeSelect         PropertyType = "select"
	TypeStatus         PropertyType = "status"
	TypeDate           PropertyType = "date"
	TypeCheckbox       PropertyType = "checkbox"
	TypeURL            PropertyType = "url"
	TypeEmail          PropertyType = "email"
	TypePhoneNumber    PropertyType = "phone_number"
	TypeUniqueID       PropertyType = "unique_id"
	TypeCreatedTime    PropertyType = "created_time"
	TypeLastEditedTime PropertyType = "last_edited_time"
	TypeRollup         PropertyType = "rollup"
	TypePeople         PropertyType = "people"
	TypeRelation       PropertyType = "relation"
)

// StatusGroup is one of a status property's groups (To-do, In Progress,
// Complete) and the options in it, in display order
// (https://developers.notion.com/reference/property-object#status).
type StatusGroup struct {
	Name    string
	Options []string
}

// Property declares one column of a database schema.
type Property struct {
	Name string
	Type PropertyType
	// Options are the select or status option names, in display order
	// (Notion sorts select values by this order, not alphabetically).
	Options []string
	// Prefix is a unique_id property's prefix, such as "TASK" for TASK-42.
	Prefix string
	// Groups are a status property's groups; every option is in exactly
	// one. Without them all options are in one To-do group.
	Groups []StatusGroup
	// Synced names, for a relation to its own data source, the property
	// that shows the other side (Sub-tasks and Parent-task): Notion keeps
	// the two in step ("dual_property",
	// https://developers.notion.com/reference/property-object#relation).
	Synced string
	// Config is the type-specific schema object of a type the emulator does
	// not model (rollup, button, …); nil renders as {}.
	Config json.RawMessage
	// Value is what every page shows for a type the emulator does not model,
	// until Server.SetComputed changes it; nil renders as null.
	Value json.RawMessage
}

// DatabaseSchema describes a database to create with Server.CreateDatabase.
type DatabaseSchema struct {
	// ID fixes the database id (with or without dashes); empty means random.
	ID         string
	Title      string
	Properties []Property
}

// modelled reports whether the emulator stores and validates values of t.
func (t PropertyType) modelled() bool {
	switch t {
	case TypeTitle, TypeRichText, TypeNumber, TypeSelect, TypeStatus, TypeDate,
		TypeCheckbox, TypeURL, TypeEmail, TypePhoneNumber, TypePeople, TypeRelation,
		TypeUniqueID, TypeCreatedTime, TypeLastEditedTime:
		return true
	}
	return false
}

// writable reports whether pages may set values of t through the API.
func (t PropertyType) writable() bool {
	switch t {
	case TypeUniqueID, TypeCreatedTime, TypeLastEditedTime:
		return false
	}
	return t.modelled()
}

// optionColors is the palette Notion cycles through for new options.
var optionColors = []string{"default", "gray", "brown", "orange", "yellow", "green", "blue", "purple", "pink", "red"}

type option struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Color string `json:"color"`
}

type column struct {
	id      string
	name    string
	typ     PropertyType
	options []option
	groups  []group
	prefix  string
	synced  string
	config  json.RawMessage
	value   json.RawMessage
	rollup  *rollupConfig
}

// group is a status group as the schema renders it.
type group struct {
	id, name, color string
	options         []string // option names
}

// database is one data source: a schema and its pages. Before 2025-09-03
// the API showed it under its container's id, as "the" database.
type database struct {
	id         string
	container  *container
	title      string
	created    time.Time
	columns    []*column // in schema order
	byKey      map[string]*column
	shared     map[string]bool   // tokens the database is shared with
	users      map[string]string // the workspace's members, shared with the Server
	pages      []*page           // in creation order
	nextUnique int
}

// lookup finds a column by name or by id: Notion accepts both wherever a
// property is named in a request.
func (db *database) lookup(key string) (*column, bool) {
	c, ok := db.byKey[key]
	return c, ok
}

func newDatabase(schema DatabaseSchema, created time.Time) (*database, error) {
	id := newID()
	if schema.ID != "" {
		var ok bool
		if id, ok = normalizeID(schema.ID); !ok {
			return nil, fmt.Errorf("database id %q is not a UUID", schema.ID)
		}
	}
	db := &database{
		id: id, title: schema.Title, created: created,
		byKey: map[string]*column{}, shared: map[string]bool{}, nextUnique: 1,
	}
	var titles, uniques int
	for _, p := range schema.Properties {
		c, err := newColumn(p, db.byKey)
		if err != nil {
			return nil, err
		}
		switch p.Type {
		case TypeTitle:
			titles++
		case TypeUniqueID:
			uniques++
		}
		db.columns = append(db.columns, c)
		db.byKey[c.name] = c
		db.byKey[c.id] = c
	}
	if titles != 1 {
		return nil, fmt.Errorf("database %q has %d title properties, Notion requires exactly one", schema.Title, titles)
	}
	if uniques > 1 {
		return nil, fmt.Errorf("database %q has %d unique_id properties, Notion allows one", schema.Title, uniques)
	}
	return db, nil
}

func newColumn(p Property, taken map[string]*column) (*column, error) {
	switch {
	case strings.TrimSpace(p.Name) == "":
		return nil, errors.New("property with an empty name")
	case p.Type == "":
		return nil, fmt.Errorf("property %q has no type", p.Name)
	case taken[p.Name] != nil:
		return nil, fmt.Errorf("property %q declared twice", p.Name)
	case p.Type.modelled() && (p.Config != nil || p.Value != nil):
		return nil, fmt.Errorf("property %q: Config and Value are for types the emulator does not model, not %s", p.Name, p.Type)
	}
	c := &column{name: p.Name, typ: p.Type, prefix: p.Prefix, synced: p.Synced, config: p.Config, value: p.Value}
	c.id = propertyID(p, taken)
	for _, name := range p.Options {
		if _, err := c.addOption(name); err != nil {
			return nil, fmt.Errorf("property %q: %w", p.Name, err)
		}
	}
	if err := c.setGroups(p.Groups); err != nil {
		return nil, fmt.Errorf("property %q: %w", p.Name, err)
	}
	if p.Type == TypeRollup && p.Config != nil {
		r, err := parseRollupConfig(p.Config)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", p.Name, err)
		}
		c.rollup = r
	}
	if p.Synced != "" && p.Type != TypeRelation {
		return nil, fmt.Errorf("property %q: Synced is for relations, not %s", p.Name, p.Type)
	}
	return c, nil
}

// groupColors are the colours Notion gives its three status groups.
var groupColors = map[string]string{"To-do": "gray", "In Progress": "blue", "Complete": "green"}

// setGroups files a status property's options into groups: all in one
// To-do group when none are given.
func (c *column) setGroups(groups []StatusGroup) error {
	if len(groups) > 0 && c.typ != TypeStatus {
		return fmt.Errorf("groups are for status properties, not %s", c.typ)
	}
	if c.typ != TypeStatus {
		return nil
	}
	if len(groups) == 0 {
		names := make([]string, len(c.options))
		for i, o := range c.options {
			names[i] = o.Name
		}
		groups = []StatusGroup{{Name: "To-do", Options: names}}
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for _, name := range g.Options {
			if _, ok := c.option(name); !ok {
				return fmt.Errorf("group %q names option %q the property lacks", g.Name, name)
			}
			if seen[name] {
				return fmt.Errorf("option %q is in two groups", name)
			}
			seen[name] = true
		}
		color := groupColors[g.Name]
		if color == "" {
			color = "default"
		}
		c.groups = append(c.groups, group{id: newID(), name: g.Name, color: color, options: g.Options})
	}
	if len(seen) != len(c.options) {
		return errors.New("every status option must be in a group")
	}
	return nil
}

// hasOption reports whether the property has an option of that name.
func (c *column) hasOption(name string) bool {
	return slices.ContainsFunc(c.options, func(o option) bool { return o.Name == name })
}

// hasGroup reports whether a status property has a group of that name.
func (c *column) hasGroup(name string) bool {
	return slices.ContainsFunc(c.groups, func(g group) bool { return g.name == name })
}

// groupOf is the name of the status group holding option name.
func (c *column) groupOf(name string) string {
	for _, g := range c.groups {
		if slices.Contains(g.options, name) {
			return g.name
		}
	}
	return ""
}

// propertyID makes the short, URL-encoded, stable id Notion gives a
// property ("title" for the title), so clients that address properties by
// id are exercised with ids that need escaping.
func propertyID(p Property, taken map[string]*column) string {
	if p.Type == TypeTitle {
		return "title"
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789<>:;=?@[]^_`{|}~"
	h := fnv.New64a()
	h.Write([]byte(p.Name))
	n := h.Sum64()
	var raw []byte
	for len(raw) < 4 || taken[url.QueryEscape(string(raw))] != nil {
		raw = append(raw, alphabet[n%uint64(len(alphabet))])
		n = n/uint64(len(alphabet)) + uint64(len(raw))*7919
	}
	return url.QueryEscape(string(raw))
}

// addOption appends a select or status option the way Notion does when a
// page names an option the schema lacks.
func (c *column) addOption(name string) (option, error) {
	switch {
	case name == "":
		return option{}, errors.New("option names cannot be empty")
	case strings.Contains(name, ","):
		return option{}, fmt.Errorf("option %q: option names cannot contain commas", name)
	case len([]rune(name)) > 100:
		return option{}, fmt.Errorf("option %q: option names are limited to 100 characters", name)
	}
	if o, ok := c.option(name); ok {
		return o, nil
	}
	o := option{ID: newID(), Name: name, Color: optionColors[len(c.options)%len(optionColors)]}
	c.options = append(c.options, o)
	return o, nil
}

func (c *column) option(name string) (option, bool) {
	for _, o := range c.options {
		if o.Name == name {
			return o, true
		}
	}
	return option{}, false
}

// optionRank is an option's position in the schema, which is how Notion
// orders select values when sorting.
func (c *column) optionRank(name string) int {
	for i, o := range c.options {
		if o.Name == name {
			return i
		}
	}
	return len(c.options)
}

// schemaJSON renders the column as a database property object, e.g.
// {"id":"%3EQQn","name":"Status","type":"select","select":{"options":[...]}}.
func (c *column) schemaJSON() map[string]any {
	var config any = map[string]any{}
	switch c.typ {
	case TypeNumber:
		config = map[string]any{"format": "number"}
	case TypeSelect:
		config = map[string]any{"options": c.optionsJSON()}
	case TypeStatus:
		groups := make([]any, len(c.groups))
		for i, g := range c.groups {
			ids := make([]string, len(g.options))
			for j, name := range g.options {
				o, _ := c.option(name)
				ids[j] = o.ID
			}
			groups[i] = map[string]any{"id": g.id, "name": g.name, "color": g.color, "option_ids": ids}
		}
		config = map[string]any{"options": c.optionsJSON(), "groups": groups}
	case TypeUniqueID:
		config = map[string]any{"prefix": nullable(c.prefix)}
	default:
		if c.config != nil {
			config = c.config
		}
	}
	return map[string]any{"id": c.id, "name": c.name, "type": c.typ, string(c.typ): config}
}

func (c *column) optionsJSON() []any {
	out := make([]any, len(c.options))
	for i, o := range c.options {
		out[i] = map[string]any{"id": o.ID, "name": o.Name, "color": o.Color, "description": nil}
	}
	return out
}

// nullable renders an empty string as JSON null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// objectJSON renders the data source as GET /v1/data_sources/{id} returns
// it (https://developers.notion.com/reference/data-source), or, before
// 2025-09-03, as GET /v1/databases/{id} returned its database.
func (db *database) objectJSON(owner, version string) map[string]any {
	props := make(map[string]any, len(db.columns))
	for _, c := range db.columns {
		prop := c.schemaJSON()
		if c.typ == TypeRelation {
			prop[string(TypeRelation)] = db.relationJSON(c)
		}
		props[c.name] = prop
	}
	obj := map[string]any{
		"object":           "database",
		"id":               db.container.id,
		"created_time":     notionTime(db.created),
		"last_edited_time": notionTime(db.created),
		"created_by":       userJSON(owner),
		"last_edited_by":   userJSON(owner),
		"title":            textArrayJSON(plainText(db.title)),
		"description":      []any{},
		"icon":             nil,
		"cover":            nil,
		"properties":       props,
		"parent":           map[string]any{"type": "workspace", "workspace": true},
		"url":              notionURL(db.container.id),
		"public_url":       nil,
		"is_inline":        false,
	}
	if dataSources(version) {
		obj["object"], obj["id"] = "data_source", db.id
		obj["parent"] = map[string]any{"type": "database_id", "database_id": db.container.id}
		obj["database_parent"] = map[string]any{"type": "workspace", "workspace": true}
		delete(obj, "is_inline")
	}
	return trash(version, false, obj)
}

func notionURL(id string) string {
	return "https://www.notion.so/" + strings.ReplaceAll(id, "-", "")
}

// notionTime formats a timestamp the way Notion does, e.g.
// "2022-10-24T22:54:00.000Z"; Server.stamp has already rounded it.
func notionTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
