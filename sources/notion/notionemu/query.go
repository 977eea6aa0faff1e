package notionemu

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxPageSize is both Notion's default and its maximum page size.
const maxPageSize = 100

// ordering compares two pages for a query's sort order.
type ordering func(a, b *page) int

// queryDatabase answers POST /v1/databases/{id}/query, which 2025-09-03
// replaced with the data source query: under it (or with several data
// sources under an older version) the request is refused.
func (s *Server) queryDatabase(r *http.Request, token string) (any, error) {
	if v := r.Header.Get("Notion-Version"); dataSources(v) {
		return nil, newAPIError(http.StatusBadRequest, "invalid_request_url",
			"Invalid request URL: query the data source (POST /v1/data_sources/{id}/query) from Notion-Version "+DataSourceVersion+" on.")
	}
	return s.query(r, token, func() (*database, error) {
		c, err := s.lockedDatabase(r.PathValue("id"), token)
		if err != nil {
			return nil, err
		}
		return c.sole()
	})
}

// query runs a query on the data source find returns; find runs under s.mu.
func (s *Server) query(r *http.Request, token string, find func() (*database, error)) (any, error) {
	body, err := readObject(r, "filter", "sorts", "start_cursor", "page_size")
	if err != nil {
		return nil, err
	}
	size, err := pageSizeFromBody(body)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	db, err := find()
	if err != nil {
		return nil, err
	}
	keep := func(*page) bool { return true }
	if raw, ok := body["filter"]; ok && !isNull(raw) {
		if keep, err = compileFilter(db, raw, "body.filter", 0, filterEnv{now: s.now(), version: r.Header.Get("Notion-Version"), beta: betas(r)}); err != nil {
			return nil, err
		}
	}
	order, err := compileSorts(db, body["sorts"])
	if err != nil {
		return nil, err
	}
	only, err := onlyProperties(db, r.URL.Query()["filter_properties"], r.Header.Get("Notion-Version"))
	if err != nil {
		return nil, err
	}
	var results []*page
	for _, p := range db.pages {
		if !p.archived && keep(p) {
			results = append(results, p)
		}
	}
	slices.SortFunc(results, order)
	// One query answers at most resultLimit pages; past it pagination
	// stops, has_more is false and every page of the answer says the
	// result is incomplete
	// (https://developers.notion.com/guides/data-apis/query-large-data-sources).
	capped := len(results) > s.resultLimit
	if capped {
		results = results[:s.resultLimit]
	}

	// A cursor names the first page of the next batch; resuming at its place
	// in the order (rather than at an offset) keeps paging stable while
	// other clients create pages.
	if raw, ok := body["start_cursor"]; ok && !isNull(raw) {
		cursor, err := asString(raw, "body.start_cursor")
		if err != nil {
			return nil, err
		}
		id, _ := normalizeID(cursor)
		at, ok := s.pages[id]
		if !ok || at.db != db {
			return nil, validationError("start_cursor provided is invalid: %s", cursor)
		}
		from, _ := slices.BinarySearchFunc(results, at, order)
		results = results[from:]
	}
	list := listJSON(results, size, "page_or_database", r.Header.Get("Notion-Version"))
	if capped {
		list["request_status"] = map[string]any{"type": "incomplete", "incomplete_reason": "query_result_limit_reached"}
	}
	if only != nil {
		for _, item := range list["results"].([]any) {
			props := item.(map[string]any)["properties"].(map[string]any)
			for name := range props {
				if !only[name] {
					delete(props, name)
				}
			}
		}
	}
	return list, nil
}

// onlyProperties reads the filter_properties query parameter, repeated
// once per property id, which limits the page properties a query answers
// with (https://developers.notion.com/reference/query-a-data-source). It
// returns the names of the properties to keep, nil for all. Without the
// parameter, Notion-Version 2026-12-01 and later keep the title alone:
// "Search and Query a data source return only the title in each page's
// properties unless you pass filter_properties"; the page's other fields
// (id, url, last_edited_time, …) do not change
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01,
// "Request only the page properties you read").
func onlyProperties(db *database, ids []string, version string) (map[string]bool, error) {
	if len(ids) == 0 && version >= TitleOnlyVersion {
		for _, c := range db.columns {
			if c.typ == TypeTitle {
				return map[string]bool{c.name: true}, nil
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	only := map[string]bool{}
	for _, id := range ids {
		c, ok := db.lookup(id)
		if !ok {
			return nil, validationError("Could not find property with name or id: %s", id)
		}
		only[c.name] = true
	}
	return only, nil
}

// listed is what a paginated list holds: pages or comments.
type listed interface {
	objectJSON(version string) map[string]any
	cursor() string
}

// listJSON renders the first size items as Notion's paginated list object,
// e.g. {"object":"list","results":[…],"next_cursor":null,"has_more":false,
// "type":"page_or_database","page_or_database":{}}. The next cursor is the
// id of the first item left out.
func listJSON[T listed](all []T, size int, kind, version string) map[string]any {
	shown := all[:min(size, len(all))]
	items := make([]any, len(shown))
	for i, item := range shown {
		items[i] = item.objectJSON(version)
	}
	var next any
	if len(all) > size {
		next = all[size].cursor()
	}
	return map[string]any{
		"object":      "list",
		"results":     items,
		"next_cursor": next,
		"has_more":    next != nil,
		"type":        kind,
		kind:          map[string]any{},
	}
}

func pageSizeFromBody(body object) (int, error) {
	raw, ok := body["page_size"]
	if !ok || isNull(raw) {
		return maxPageSize, nil
	}
	n, err := asNumber(raw, "body.page_size")
	if err != nil {
		return 0, err
	}
	return checkPageSize(n, "body.page_size", string(raw))
}

func pageSizeFromQuery(r *http.Request) (int, error) {
	raw := r.URL.Query().Get("page_size")
	if raw == "" {
		return maxPageSize, nil
	}
	n, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return 0, validationError("query failed validation: query.page_size should be a number, instead was `%q`.", raw)
	}
	return checkPageSize(n, "query.page_size", raw)
}

func checkPageSize(n float64, path, shown string) (int, error) {
	if n != float64(int(n)) || n < 1 || n > maxPageSize {
		return 0, validationError("body failed validation: %s should be an integer between 1 and %d, instead was `%s`.", path, maxPageSize, shown)
	}
	return int(n), nil
}

// compileSorts validates the sorts array, e.g. [{"property":"Priority",
// "direction":"descending"},{"timestamp":"last_edited_time",
// "direction":"ascending"}]: a property or a page timestamp each, the
// first taking precedence
// (https://developers.notion.com/reference/sort-data-source-entries).
// Creation order breaks the remaining ties, so every order is total and
// cursors are deterministic.
func compileSorts(db *database, raw json.RawMessage) (ordering, error) {
	var keys []ordering
	if !isNull(raw) {
		items, err := asArray(raw, "body.sorts")
		if err != nil {
			return nil, err
		}
		for i, item := range items {
			key, err := compileSort(db, item, fmt.Sprintf("body.sorts[%d]", i))
			if err != nil {
				return nil, err
			}
			keys = append(keys, key)
		}
	}
	return func(a, b *page) int {
		for _, key := range keys {
			if c := key(a, b); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.seq, b.seq)
	}, nil
}

func compileSort(db *database, raw json.RawMessage, path string) (ordering, error) {
	o, err := asObject(raw, path)
	if err != nil {
		return nil, err
	}
	if err := o.onlyKeys(path, "property", "timestamp", "direction"); err != nil {
		return nil, err
	}
	direction, err := asString(o["direction"], path+".direction")
	if err != nil {
		return nil, err
	}
	if direction != "ascending" && direction != "descending" {
		return nil, validationError("body failed validation: %s.direction should be `ascending` or `descending`, instead was `%q`.", path, direction)
	}
	var key sortKey
	_, byProperty := o["property"]
	_, byTimestamp := o["timestamp"]
	switch {
	case byProperty == byTimestamp:
		return nil, validationError("body failed validation: %s should have either `property` or `timestamp`.", path)
	case byTimestamp:
		which, err := timestampName(o["timestamp"], path+".timestamp")
		if err != nil {
			return nil, err
		}
		key = timestampKey(which)
	default:
		c, err := namedColumn(db, o["property"], path+".property")
		if err != nil {
			return nil, err
		}
		if key = propertyKey(c); key == nil {
			return nil, validationError("notionemu: sorting on %s properties is not emulated", c.typ)
		}
	}
	descending := direction == "descending"
	return func(a, b *page) int {
		c, aEmpty, bEmpty := key(a, b)
		switch {
		case aEmpty && bEmpty:
			return 0
		case aEmpty: // Notion puts empty values last in either direction
			return 1
		case bEmpty:
			return -1
		case descending:
			return -c
		}
		return c
	}, nil
}

// sortKey compares two pages on one key and says which of them has no
// value for it.
type sortKey func(a, b *page) (c int, aEmpty, bEmpty bool)

func timestampKey(which PropertyType) sortKey {
	return func(a, b *page) (int, bool, bool) {
		return timestampOf(a, which).t.Compare(timestampOf(b, which).t), false, false
	}
}

func propertyKey(c *column) sortKey {
	switch c.typ {
	case TypeTitle, TypeRichText, TypeURL, TypeEmail, TypePhoneNumber:
		return func(a, b *page) (int, bool, bool) {
			x, y := textOf(a, c), textOf(b, c)
			return cmp.Or(strings.Compare(strings.ToLower(x), strings.ToLower(y)), strings.Compare(x, y)), x == "", y == ""
		}
	case TypeNumber:
		return func(a, b *page) (int, bool, bool) {
			x, y := a.values[c].number, b.values[c].number
			if x == nil || y == nil {
				return 0, x == nil, y == nil
			}
			return cmp.Compare(*x, *y), false, false
		}
	case TypeSelect, TypeStatus:
		return func(a, b *page) (int, bool, bool) {
			x, y := a.values[c].option, b.values[c].option
			if x == nil || y == nil {
				return 0, x == nil, y == nil
			}
			return cmp.Compare(c.optionRank(x.Name), c.optionRank(y.Name)), false, false
		}
	case TypeDate:
		return func(a, b *page) (int, bool, bool) {
			x, y := a.values[c].date, b.values[c].date
			if x == nil || y == nil {
				return 0, x == nil, y == nil
			}
			return x.start.t.Compare(y.start.t), false, false
		}
	case TypeCheckbox:
		return func(a, b *page) (int, bool, bool) {
			x, y := a.values[c].checkbox, b.values[c].checkbox
			return cmp.Compare(boolRank(x), boolRank(y)), false, false
		}
	case TypeUniqueID:
		return func(a, b *page) (int, bool, bool) { return cmp.Compare(a.unique, b.unique), false, false }
	case TypeCreatedTime, TypeLastEditedTime:
		return timestampKey(c.typ)
	}
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
