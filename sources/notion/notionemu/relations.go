package notionemu

import (
	"encoding/json"
	"fmt"
	"slices"
)

// AddUser adds a member to the workspace: people properties accept their
// ids and show their names; an empty name is a member whose name Notion
// does not give (null from 2026-12-01, see peopleJSON).
func (s *Server) AddUser(id, name string) error {
	norm, ok := normalizeID(id)
	if !ok {
		return fmt.Errorf("notionemu: user id %q is not a UUID", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[norm] = name
	return nil
}

// maxReferences is how many users or pages one people or relation value
// may name in a request ("relation": an array of at most 100 page
// references; https://developers.notion.com/reference/request-limits).
const maxReferences = 100

// shownReferences is how many references a page object shows of a people
// or relation value: "Property values in the page object have a 25 page
// reference limit" (https://developers.notion.com/reference/property-value-object).
const shownReferences = 25

// parsePeople validates a people value, [{"object":"user","id":"…"}]
// (https://developers.notion.com/reference/page-property-values#people):
// every id must be a member of the workspace.
func parsePeople(db *database, raw json.RawMessage, path string) ([]string, error) {
	return parseReferences(raw, path, func(o object, at string) (string, error) {
		if err := o.onlyKeys(at, "object", "id"); err != nil {
			return "", err
		}
		if kind, ok := o["object"]; ok {
			if s, err := asString(kind, at+".object"); err != nil || s != "user" {
				return "", validationError("body failed validation: %s.object should be `\"user\"`.", at)
			}
		}
		id, err := referenceID(o, at)
		if err != nil {
			return "", err
		}
		if _, ok := db.users[id]; !ok {
			return "", validationError("Could not find user with ID: %s.", id)
		}
		return id, nil
	})
}

// parseRelation validates a relation value, [{"id":"…"}] of pages in the
// related data source (https://developers.notion.com/reference/page-property-values#relation).
// The emulator models relations within one data source (Sub-tasks and
// Parent-task).
func parseRelation(db *database, raw json.RawMessage, path string) ([]string, error) {
	return parseReferences(raw, path, func(o object, at string) (string, error) {
		if err := o.onlyKeys(at, "id"); err != nil {
			return "", err
		}
		id, err := referenceID(o, at)
		if err != nil {
			return "", err
		}
		if db.pageByID(id) == nil {
			return "", validationError("Could not find page with ID: %s. Make sure the relevant pages and databases are shared with your integration.", id)
		}
		return id, nil
	})
}

func parseReferences(raw json.RawMessage, path string, one func(o object, at string) (string, error)) ([]string, error) {
	items, err := asArray(raw, path)
	if err != nil {
		return nil, err
	}
	if len(items) > maxReferences {
		return nil, validationError("body failed validation: %s.length should be ≤ `%d`, instead was `%d`.", path, maxReferences, len(items))
	}
	ids := []string{}
	for i, item := range items {
		at := fmt.Sprintf("%s[%d]", path, i)
		o, err := asObject(item, at)
		if err != nil {
			return nil, err
		}
		id, err := one(o, at)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func referenceID(o object, at string) (string, error) {
	s, err := asString(o["id"], at+".id")
	if err != nil {
		return "", err
	}
	id, ok := normalizeID(s)
	if !ok {
		return "", validationError("body failed validation: %s.id should be a valid uuid, instead was `%q`.", at, s)
	}
	return id, nil
}

func (db *database) pageByID(id string) *page {
	for _, p := range db.pages {
		if p.id == id {
			return p
		}
	}
	return nil
}

// peopleJSON renders user references as the page object does: the user's
// id, and the name of a workspace member. A member added without a name
// (AddUser with "") shows "name": null under Notion-Version 2026-12-01,
// which says to "treat name as optional"
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01,
// "Person names"), and an empty name before it.
func (db *database) peopleJSON(ids []string, limit int, version string) []any {
	out := []any{}
	for _, id := range ids[:min(len(ids), limit)] {
		u := map[string]any{"object": "user", "id": id}
		if name, ok := db.users[id]; ok {
			var shown any = name
			if name == "" && version >= TitleOnlyVersion {
				shown = nil
			}
			u["name"], u["type"], u["person"], u["avatar_url"] = shown, "person", map[string]any{}, nil
		}
		out = append(out, u)
	}
	return out
}

func relationJSON(ids []string, limit int) []any {
	out := []any{}
	for _, id := range ids[:min(len(ids), limit)] {
		out = append(out, map[string]any{"id": id})
	}
	return out
}

// relationJSON is a relation property's schema: to its own data source,
// synced with its other side when it has one.
func (db *database) relationJSON(c *column) map[string]any {
	cfg := map[string]any{"data_source_id": db.id, "database_id": db.container.id}
	if other, ok := db.lookup(c.synced); ok && c.synced != "" {
		cfg["type"] = "dual_property"
		cfg["dual_property"] = map[string]any{"synced_property_name": other.name, "synced_property_id": other.id}
	} else {
		cfg["type"] = "single_property"
		cfg["single_property"] = map[string]any{}
	}
	return cfg
}

// syncRelation keeps the other side of a dual relation in step after p's
// value of c changed from before to after, as Notion does.
func (p *page) syncRelation(c *column, before, after []string) {
	other, ok := p.db.lookup(c.synced)
	if !ok || c.synced == "" || other.typ != TypeRelation {
		return
	}
	for _, id := range before {
		if q := p.db.pageByID(id); q != nil && !slices.Contains(after, id) {
			v := q.values[other]
			v.refs = slices.DeleteFunc(slices.Clone(v.refs), func(s string) bool { return s == p.id })
			q.values[other] = v
		}
	}
	for _, id := range after {
		if q := p.db.pageByID(id); q != nil && !slices.Contains(q.values[other].refs, p.id) {
			v := q.values[other]
			v.refs = append(slices.Clone(v.refs), p.id)
			q.values[other] = v
		}
	}
}

// rollupConfig is a rollup's schema: which relation it follows, which
// property of the related pages it reads, and how it sums them up
// (https://developers.notion.com/reference/property-object#rollup).
type rollupConfig struct {
	Relation string `json:"relation_property_name"`
	Property string `json:"rollup_property_name"`
	Function string `json:"function"`
}

func parseRollupConfig(raw json.RawMessage) (*rollupConfig, error) {
	var r rollupConfig
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("rollup config: %w", err)
	}
	return &r, nil
}

// computes reports whether the emulator computes c: a rollup over a
// relation of its own data source, with a function it knows.
func (db *database) computes(c *column) bool {
	if c.rollup == nil {
		return false
	}
	rel, ok := db.lookup(c.rollup.Relation)
	return ok && rel.typ == TypeRelation && (c.rollup.Function == "count" || c.rollup.Function == "count_per_group")
}

// completeGroup is the status group a count_per_group rollup counts: the
// skill's "Completed Sub-tasks" counts the Complete group (Done and
// Canceled), as its schema.md describes.
const completeGroup = "Complete"

// rollupJSON computes c for p over at most limit related pages: "count"
// counts them, "count_per_group" counts those whose status is in the
// Complete group. Notion computes a page object's rollup "based on a
// maximum of 25 relations", and the exact value only from the page
// property endpoint (https://developers.notion.com/reference/retrieve-a-page-property).
func (p *page) rollupJSON(c *column, limit int) map[string]any {
	rel, _ := p.db.lookup(c.rollup.Relation)
	refs := p.values[rel].refs
	refs = refs[:min(len(refs), limit)]
	n := 0
	for _, id := range refs {
		q := p.db.pageByID(id)
		switch {
		case q == nil || q.archived:
		case c.rollup.Function == "count":
			n++
		default:
			if st, ok := p.db.lookup(c.rollup.Property); ok && st.typ == TypeStatus {
				if o := q.values[st].option; o != nil && st.groupOf(o.Name) == completeGroup {
					n++
				}
			}
		}
	}
	return map[string]any{"type": "number", "number": n, "function": c.rollup.Function}
}
