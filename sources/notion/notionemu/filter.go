package notionemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// predicate decides whether a page belongs in a query's results.
type predicate func(*page) bool

// maxFilterDepth is how deep compound filters may nest. Notion's
// reference says "Nesting is supported up to two levels deep"
// (https://developers.notion.com/reference/filter-data-source-entries,
// compound filter condition); the emulator reads it strictly — an "and"
// may hold an "or", which may not hold another compound — so that a
// filter it accepts is one Notion accepts under either reading.
const maxFilterDepth = 2

// filterEnv is what a filter means beside the data source it runs on:
// the clock the relative date conditions (past_week, …) are read on, and
// the request's Notion-Version and Notion-Beta headers, which decide what
// a status condition matches (compileStatus).
type filterEnv struct {
	now     time.Time
	version string
	beta    []string
}

// compileFilter validates a query's filter object and turns it into a
// predicate.
func compileFilter(db *database, raw json.RawMessage, path string, depth int, env filterEnv) (predicate, error) {
	o, err := asObject(raw, path)
	if err != nil {
		return nil, err
	}
	for _, op := range []string{"and", "or"} {
		if _, ok := o[op]; ok {
			return compileCompound(db, o, op, path, depth, env)
		}
	}
	if ts, ok := o["timestamp"]; ok {
		return compileTimestamp(o, ts, path, env.now)
	}
	return compileProperty(db, o, path, env)
}

// compileCompound handles {"and": [filter, …]} and {"or": [filter, …]}:
// "and" returns the pages every filter in the array matches, "or" those
// any of them matches; the array may hold property, timestamp and nested
// compound filters
// (https://developers.notion.com/reference/filter-data-source-entries).
// Here an empty "and" matches every page and an empty "or" none.
func compileCompound(db *database, o object, op, path string, depth int, env filterEnv) (predicate, error) {
	if err := o.onlyKeys(path, op); err != nil {
		return nil, err
	}
	if depth >= maxFilterDepth {
		return nil, validationError("body failed validation: %s.%s: compound filters can be nested at most %d levels deep.", path, op, maxFilterDepth)
	}
	items, err := asArray(o[op], path+"."+op)
	if err != nil {
		return nil, err
	}
	parts := make([]predicate, len(items))
	for i, item := range items {
		if parts[i], err = compileFilter(db, item, fmt.Sprintf("%s.%s[%d]", path, op, i), depth+1, env); err != nil {
			return nil, err
		}
	}
	all := op == "and"
	return func(p *page) bool {
		for _, part := range parts {
			if part(p) != all {
				return !all
			}
		}
		return all
	}, nil
}

// compileTimestamp handles the timestamp filter {"timestamp":
// "last_edited_time", "last_edited_time": {"on_or_after": "…"}} (or
// created_time), which needs no property and takes a date filter
// condition (https://developers.notion.com/reference/filter-data-source-entries,
// timestamp). The timestamps are the page's, rounded down to the minute.
func compileTimestamp(o object, ts json.RawMessage, path string, now time.Time) (predicate, error) {
	which, err := timestampName(ts, path+".timestamp")
	if err != nil {
		return nil, err
	}
	if err := o.onlyKeys(path, "timestamp", "type", string(which)); err != nil {
		return nil, err
	}
	match, err := compileDate(o[string(which)], path+"."+string(which), now, false)
	if err != nil {
		return nil, err
	}
	return func(p *page) bool { return match(timestampOf(p, which)) }, nil
}

// timestampName validates the name of a page timestamp that filters and
// sorts may use without a property.
func timestampName(raw json.RawMessage, path string) (PropertyType, error) {
	name, err := asString(raw, path)
	if err != nil {
		return "", err
	}
	if name != string(TypeCreatedTime) && name != string(TypeLastEditedTime) {
		return "", validationError("body failed validation: %s should be `created_time` or `last_edited_time`, instead was `%q`.", path, name)
	}
	return PropertyType(name), nil
}

// namedColumn finds the property a filter or sort names by name or id.
func namedColumn(db *database, raw json.RawMessage, path string) (*column, error) {
	name, err := asString(raw, path)
	if err != nil {
		return nil, err
	}
	c, ok := db.lookup(name)
	if !ok {
		return nil, validationError("Could not find property with name or id: %s", name)
	}
	return c, nil
}

// timestampOf is a page's created or last-edited time.
func timestampOf(p *page, which PropertyType) *instant {
	if which == TypeCreatedTime {
		return &instant{t: p.created}
	}
	return &instant{t: p.edited}
}

func compileProperty(db *database, o object, path string, env filterEnv) (predicate, error) {
	c, err := namedColumn(db, o["property"], path+".property")
	if err != nil {
		return nil, err
	}
	var key string
	var cond json.RawMessage
	for k, v := range o {
		if k != "property" && k != "type" {
			if key != "" {
				return nil, validationError("body failed validation: %s should have one filter condition, instead had `%s` and `%s`.", path, key, k)
			}
			key, cond = k, v
		}
	}
	if key == "" {
		return nil, validationError("body failed validation: %s should have a filter condition for %s.", path, c.name)
	}
	if !filterKeyFits(c.typ, key) {
		return nil, validationError("database property %s does not match filter %s", c.typ, key)
	}
	path += "." + key
	switch c.typ {
	case TypeTitle, TypeRichText, TypeURL, TypeEmail, TypePhoneNumber:
		match, err := compileText(cond, path)
		return func(p *page) bool { return match(textOf(p, c)) }, err
	case TypeNumber:
		match, err := compileNumber(cond, path, true)
		return func(p *page) bool { return match(p.values[c].number) }, err
	case TypeUniqueID:
		match, err := compileNumber(cond, path, false)
		return func(p *page) bool { n := float64(p.unique); return match(&n) }, err
	case TypeSelect:
		match, err := compileSelect(cond, path)
		return func(p *page) bool { return match(p.values[c].option) }, err
	case TypeStatus:
		match, err := compileStatus(c, cond, path, env)
		return func(p *page) bool { return match(p.values[c].option) }, err
	case TypeDate:
		match, err := compileDate(cond, path, env.now, true)
		return func(p *page) bool { return match(startOf(p.values[c].date)) }, err
	case TypeCheckbox:
		match, err := compileCheckbox(cond, path)
		return func(p *page) bool { return match(p.values[c].checkbox) }, err
	case TypeCreatedTime, TypeLastEditedTime:
		match, err := compileDate(cond, path, env.now, false)
		return func(p *page) bool { return match(timestampOf(p, c.typ)) }, err
	}
	return nil, validationError("notionemu: filtering on %s properties is not emulated", c.typ)
}

// filterKeyFits reports whether a filter condition key may be used on a
// property type; a title also answers to "rich_text".
func filterKeyFits(t PropertyType, key string) bool {
	return key == string(t) || (t == TypeTitle && key == string(TypeRichText)) ||
		((t == TypeCreatedTime || t == TypeLastEditedTime) && key == string(TypeDate))
}

func textOf(p *page, c *column) string {
	v := p.values[c]
	if v.str != nil {
		return *v.str
	}
	return joinPlain(v.text)
}

func startOf(d *dateValue) *instant {
	if d == nil {
		return nil
	}
	return &d.start
}

// condition splits a type-specific filter condition such as {"equals":
// "READY"} into its operator and argument; Notion allows exactly one.
func condition(raw json.RawMessage, path string) (op string, arg json.RawMessage, err error) {
	o, err := asObject(raw, path)
	if err != nil {
		return "", nil, err
	}
	return o.single(path)
}

// emptiness compiles is_empty / is_not_empty, which Notion accepts only
// with the value true.
func emptiness(op string, raw json.RawMessage, path string) (wantEmpty bool, err error) {
	b, err := asBool(raw, path+"."+op)
	if err == nil && !b {
		err = validationError("body failed validation: %s.%s should be `true`, instead was `false`.", path, op)
	}
	return op == "is_empty", err
}

// compileText handles the rich text filter condition, which also serves
// title, url, email and phone_number properties: equals, does_not_equal,
// contains, does_not_contain, starts_with, ends_with, is_empty and
// is_not_empty (https://developers.notion.com/reference/filter-data-source-entries,
// rich text). The reference does not spell out case; the filter object
// "mimics the data source filter option in the Notion UI", whose text
// filters ignore case, so substring conditions here do too.
func compileText(raw json.RawMessage, path string) (func(string) bool, error) {
	op, arg, err := condition(raw, path)
	if err != nil {
		return nil, err
	}
	if op == "is_empty" || op == "is_not_empty" {
		wantEmpty, err := emptiness(op, arg, path)
		return func(s string) bool { return (s == "") == wantEmpty }, err
	}
	want, err := asString(arg, path+"."+op)
	if err != nil {
		return nil, err
	}
	// Notion matches substrings case-insensitively, equality exactly.
	fold := strings.ToLower(want)
	tests := map[string]func(string) bool{
		"equals":           func(s string) bool { return s == want },
		"does_not_equal":   func(s string) bool { return s != want },
		"contains":         func(s string) bool { return strings.Contains(strings.ToLower(s), fold) },
		"does_not_contain": func(s string) bool { return !strings.Contains(strings.ToLower(s), fold) },
		"starts_with":      func(s string) bool { return strings.HasPrefix(strings.ToLower(s), fold) },
		"ends_with":        func(s string) bool { return strings.HasSuffix(strings.ToLower(s), fold) },
	}
	if test, ok := tests[op]; ok {
		return test, nil
	}
	return nil, unknownCondition(path, op)
}

func unknownCondition(path, op string) error {
	return validationError("body failed validation: %s.%s is not a supported filter condition.", path, op)
}

func compileNumber(raw json.RawMessage, path string, emptyAllowed bool) (func(*float64) bool, error) {
	op, arg, err := condition(raw, path)
	if err != nil {
		return nil, err
	}
	if emptyAllowed && (op == "is_empty" || op == "is_not_empty") {
		wantEmpty, err := emptiness(op, arg, path)
		return func(n *float64) bool { return (n == nil) == wantEmpty }, err
	}
	want, err := asNumber(arg, path+"."+op)
	if err != nil {
		return nil, err
	}
	tests := map[string]func(float64) bool{
		"equals":                   func(n float64) bool { return n == want },
		"does_not_equal":           func(n float64) bool { return n != want },
		"greater_than":             func(n float64) bool { return n > want },
		"less_than":                func(n float64) bool { return n < want },
		"greater_than_or_equal_to": func(n float64) bool { return n >= want },
		"less_than_or_equal_to":    func(n float64) bool { return n <= want },
	}
	test, ok := tests[op]
	if !ok {
		return nil, unknownCondition(path, op)
	}
	return func(n *float64) bool {
		if n == nil {
			return op == "does_not_equal"
		}
		return test(*n)
	}, nil
}

// compileSelect handles the select and status filter conditions, which
// are the same: equals and does_not_equal an option name (exactly), and
// is_empty / is_not_empty (https://developers.notion.com/reference/filter-data-source-entries,
// select and status). The property's type picks the key: "select" on a
// select, "status" on a status (filterKeyFits). The reference does not say
// whether does_not_equal matches a page without a value; the emulator
// lets such a page through.
func compileSelect(raw json.RawMessage, path string) (func(*option) bool, error) {
	op, arg, err := condition(raw, path)
	if err != nil {
		return nil, err
	}
	switch op {
	case "is_empty", "is_not_empty":
		wantEmpty, err := emptiness(op, arg, path)
		return func(v *option) bool { return (v == nil) == wantEmpty }, err
	case "equals", "does_not_equal":
		want, err := optionNames(arg, path+"."+op)
		equal := op == "equals"
		return func(v *option) bool { return (v != nil && slices.Contains(want, v.Name)) == equal }, err
	}
	return nil, unknownCondition(path, op)
}

// compileStatus handles the status filter condition: the select
// conditions on option names, and status groups, which changed with
// Notion-Version 2026-12-01
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01,
// "Status filters"; https://developers.notion.com/reference/filter-data-source-entries,
// status):
//
//   - before 2026-12-01, equals and does_not_equal given a name that is no
//     option of the property but names one of its groups ("To-do", "In
//     progress", "Complete") match that group's options; from 2026-12-01
//     "equals stops matching groups": such a name matches no option.
//   - {"group": {"equals" | "does_not_equal": name}} matches by group on
//     2026-12-01, and before it only with the header "Notion-Beta:
//     status-group-filters-2026-10-06"; without the header an older version
//     refuses it (validation_error), as it refuses any unknown condition.
//
// The guide does not say whether a group name the property lacks is an
// error; here it matches no page, as an unknown option name does.
func compileStatus(c *column, raw json.RawMessage, path string, env filterEnv) (func(*option) bool, error) {
	op, arg, err := condition(raw, path)
	if err != nil {
		return nil, err
	}
	if op == "group" {
		if env.version < TitleOnlyVersion && !slices.Contains(env.beta, StatusGroupBeta) {
			return nil, validationError("body failed validation: %s.group is a status group filter: before Notion-Version %s it needs the header Notion-Beta: %s.", path, TitleOnlyVersion, StatusGroupBeta)
		}
		gop, garg, err := condition(arg, path+".group")
		if err != nil {
			return nil, err
		}
		if gop != "equals" && gop != "does_not_equal" {
			return nil, unknownCondition(path+".group", gop)
		}
		want, err := optionNames(garg, path+".group."+gop)
		equal := gop == "equals"
		return func(v *option) bool { return (v != nil && slices.Contains(want, c.groupOf(v.Name))) == equal }, err
	}
	if op != "equals" && op != "does_not_equal" {
		return compileSelect(raw, path)
	}
	want, err := optionNames(arg, path+"."+op)
	if err != nil {
		return nil, err
	}
	var groups []string
	if env.version < TitleOnlyVersion {
		for _, name := range want {
			if !c.hasOption(name) && c.hasGroup(name) {
				groups = append(groups, name)
			}
		}
	}
	equal := op == "equals"
	return func(v *option) bool {
		in := v != nil && (slices.Contains(want, v.Name) || slices.Contains(groups, c.groupOf(v.Name)))
		return in == equal
	}, nil
}

// optionNames reads the value of a select or status equals or
// does_not_equal: one option name, or an array of them, which matches any
// of them (equals) or none of them (does_not_equal) — "Select, status,
// and multi_select filter operators accept a single string or an array of
// strings to filter by multiple values" (notion-sdk-js PR #707;
// https://developers.notion.com/reference/filter-data-source-entries).
func optionNames(raw json.RawMessage, path string) ([]string, error) {
	if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '[' {
		var names []string
		if err := json.Unmarshal(raw, &names); err != nil || len(names) == 0 {
			return nil, validationError("body failed validation: %s should be a string or a non-empty array of strings.", path)
		}
		return names, nil
	}
	name, err := asString(raw, path)
	return []string{name}, err
}

func compileCheckbox(raw json.RawMessage, path string) (func(bool) bool, error) {
	op, arg, err := condition(raw, path)
	if err != nil {
		return nil, err
	}
	if op != "equals" && op != "does_not_equal" {
		return nil, unknownCondition(path, op)
	}
	want, err := asBool(arg, path+"."+op)
	equal := op == "equals"
	return func(b bool) bool { return (b == want) == equal }, err
}

// compileDate handles the date filter condition for date properties and
// for the created and last-edited timestamps, which are never empty:
// equals, before, after, on_or_before, on_or_after with an ISO 8601 date
// or date-time, the relative past_week … next_year, is_empty and
// is_not_empty. "If a date string with a time is provided, then the
// comparison is done with millisecond precision. If no timezone is
// provided, then the timezone defaults to UTC"
// (https://developers.notion.com/reference/filter-data-source-entries, date);
// see instant.compare.
func compileDate(raw json.RawMessage, path string, now time.Time, emptyAllowed bool) (func(*instant) bool, error) {
	op, arg, err := condition(raw, path)
	if err != nil {
		return nil, err
	}
	if emptyAllowed && (op == "is_empty" || op == "is_not_empty") {
		wantEmpty, err := emptiness(op, arg, path)
		return func(v *instant) bool { return (v == nil) == wantEmpty }, err
	}
	if from, to, ok := relativeRange(op, now); ok {
		if _, err := asObject(arg, path+"."+op); err != nil {
			return nil, err
		}
		return func(v *instant) bool { return v != nil && !v.t.Before(from) && !v.t.After(to) }, nil
	}
	s, err := asString(arg, path+"."+op)
	if err != nil {
		return nil, err
	}
	want, ok := parseInstant(s, time.UTC)
	if !ok {
		return nil, validationError("body failed validation: %s.%s should be a valid ISO 8601 date string, instead was `%q`.", path, op, s)
	}
	tests := map[string]func(int) bool{
		"equals":       func(c int) bool { return c == 0 },
		"before":       func(c int) bool { return c < 0 },
		"after":        func(c int) bool { return c > 0 },
		"on_or_before": func(c int) bool { return c <= 0 },
		"on_or_after":  func(c int) bool { return c >= 0 },
	}
	test, ok := tests[op]
	if !ok {
		return nil, unknownCondition(path, op)
	}
	return func(v *instant) bool { return v != nil && test(v.compare(want)) }, nil
}

// relativeRange is the window of a relative date condition such as
// {"past_week": {}}.
func relativeRange(op string, now time.Time) (from, to time.Time, ok bool) {
	spans := map[string][2]int{ // years, days; negative looks back
		"past_week": {0, -7}, "past_month": {0, -30}, "past_year": {-1, 0},
		"next_week": {0, 7}, "next_month": {0, 30}, "next_year": {1, 0},
	}
	span, ok := spans[op]
	if !ok {
		return from, to, false
	}
	other := now.AddDate(span[0], 0, span[1])
	if other.Before(now) {
		return other, now, true
	}
	return now, other, true
}
