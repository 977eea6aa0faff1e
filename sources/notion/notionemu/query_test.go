package notionemu

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// seedQueue creates five tasks whose values cover every filter below.
func seedQueue(h *harness) {
	for _, props := range []string{
		`{"Name":{"title":[{"text":{"content":"alpha"}}]},"Status":{"select":{"name":"READY"}},"Priority":{"number":5},"Class":{"select":{"name":"STANDARD"}},"Agent":{"rich_text":[{"text":{"content":"Sandman"}}]},"Lock Expires":{"date":{"start":"2026-02-01T02:00:00Z"}}}`,
		`{"Name":{"title":[{"text":{"content":"beta"}}]},"Status":{"select":{"name":"READY"}},"Priority":{"number":9},"Class":{"select":{"name":"EXPEDITE"}}}`,
		`{"Name":{"title":[{"text":{"content":"gamma"}}]},"Status":{"select":{"name":"IN_PROGRESS"}},"Priority":{"number":1},"Claimed By":{"select":{"name":"AGENT"}},"Agent":{"rich_text":[{"text":{"content":"Oracle"}}]},"Lock Expires":{"date":{"start":"2026-02-01T03:00:00Z"}}}`,
		`{"Name":{"title":[{"text":{"content":"delta"}}]},"Status":{"select":{"name":"DONE"}},"Class":{"select":{"name":"INTANGIBLE"}},"Lock Expires":{"date":{"start":"2026-02-02"}}}`,
		`{"Name":{"title":[{"text":{"content":"epsilon"}}]},"Status":{"select":{"name":"READY"}},"Priority":{"number":5},"Claimed By":{"select":{"name":"HUMAN"}}}`,
	} {
		h.createTask(props)
	}
}

// Filters follow the filter-object reference: {"property": "Task
// completed", "checkbox": {"equals": true}}, type-specific conditions such as
// rich_text contains / starts_with / is_empty, number greater_than, select
// equals, date on_or_after; compound {"and": [...]} and {"or": [...]} nested
// at most two levels deep.
func TestQueryFilters(t *testing.T) {
	h := newHarness(t)
	seedQueue(h)
	tests := []struct {
		name, filter string
		want         []string
	}{
		{"select equals", `{"property":"Status","select":{"equals":"READY"}}`, []string{"alpha", "beta", "epsilon"}},
		{"select does_not_equal keeps empty", `{"property":"Claimed By","select":{"does_not_equal":"HUMAN"}}`, []string{"alpha", "beta", "gamma", "delta"}},
		{"select is_empty", `{"property":"Claimed By","select":{"is_empty":true}}`, []string{"alpha", "beta", "delta"}},
		{"select equals any of several", `{"property":"Status","select":{"equals":["IN_PROGRESS","DONE"]}}`, []string{"gamma", "delta"}},
		{"select does_not_equal any of several", `{"property":"Status","select":{"does_not_equal":["READY","DONE"]}}`, []string{"gamma"}},
		{"select is_not_empty", `{"property":"Claimed By","select":{"is_not_empty":true}}`, []string{"gamma", "epsilon"}},
		{"title equals", `{"property":"Name","title":{"equals":"beta"}}`, []string{"beta"}},
		{"title by rich_text key", `{"property":"Name","rich_text":{"starts_with":"ALP"}}`, []string{"alpha"}},
		{"rich_text contains ignores case", `{"property":"Agent","rich_text":{"contains":"sand"}}`, []string{"alpha"}},
		{"rich_text does_not_contain", `{"property":"Agent","rich_text":{"does_not_contain":"sand"}}`, []string{"beta", "gamma", "delta", "epsilon"}},
		{"rich_text ends_with", `{"property":"Agent","rich_text":{"ends_with":"cle"}}`, []string{"gamma"}},
		{"rich_text is_empty", `{"property":"Agent","rich_text":{"is_empty":true}}`, []string{"beta", "delta", "epsilon"}},
		{"rich_text does_not_equal", `{"property":"Agent","rich_text":{"does_not_equal":"Oracle"}}`, []string{"alpha", "beta", "delta", "epsilon"}},
		{"number greater_than", `{"property":"Priority","number":{"greater_than":4}}`, []string{"alpha", "beta", "epsilon"}},
		{"number less_than_or_equal_to", `{"property":"Priority","number":{"less_than_or_equal_to":5}}`, []string{"alpha", "gamma", "epsilon"}},
		{"number equals", `{"property":"Priority","number":{"equals":5}}`, []string{"alpha", "epsilon"}},
		{"number is_empty", `{"property":"Priority","number":{"is_empty":true}}`, []string{"delta"}},
		{"date before a moment", `{"property":"Lock Expires","date":{"before":"2026-02-01T02:30:00Z"}}`, []string{"alpha"}},
		{"date on_or_after a day", `{"property":"Lock Expires","date":{"on_or_after":"2026-02-01"}}`, []string{"alpha", "gamma", "delta"}},
		{"date after a day", `{"property":"Lock Expires","date":{"after":"2026-02-01"}}`, []string{"delta"}},
		{"date equals a day", `{"property":"Lock Expires","date":{"equals":"2026-02-01"}}`, []string{"alpha", "gamma"}},
		{"date is_empty", `{"property":"Lock Expires","date":{"is_empty":true}}`, []string{"beta", "epsilon"}},
		{"unique_id", `{"property":"ID","unique_id":{"greater_than_or_equal_to":4}}`, []string{"delta", "epsilon"}},
		{"and", `{"and":[{"property":"Status","select":{"equals":"READY"}},{"property":"Priority","number":{"equals":5}}]}`, []string{"alpha", "epsilon"}},
		{"or", `{"or":[{"property":"Status","select":{"equals":"DONE"}},{"property":"Class","select":{"equals":"EXPEDITE"}}]}`, []string{"beta", "delta"}},
		{"seed 002 eligibility, two levels", `{"and":[{"property":"Status","select":{"equals":"READY"}},{"property":"Claimed By","select":{"does_not_equal":"HUMAN"}},
			{"or":[{"property":"Claimed By","select":{"is_empty":true}},{"property":"Lock Expires","date":{"is_empty":true}},{"property":"Lock Expires","date":{"before":"2026-02-01T02:15:00Z"}}]}]}`, []string{"alpha", "beta"}},
		{"empty and matches all", `{"and":[]}`, []string{"alpha", "beta", "gamma", "delta", "epsilon"}},
		{"created_time timestamp", `{"timestamp":"created_time","created_time":{"on_or_before":"2026-02-01T02:15:00Z"}}`, []string{"alpha", "beta", "gamma", "delta", "epsilon"}},
		{"past_week", `{"timestamp":"last_edited_time","last_edited_time":{"past_week":{}}}`, []string{"alpha", "beta", "gamma", "delta", "epsilon"}},
		{"next_week excludes the past", `{"timestamp":"last_edited_time","last_edited_time":{"next_week":{}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := titles(h.call("POST", "/v1/databases/"+h.db+"/query", `{"filter":`+tt.filter+`}`).mustOK(t).Body)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestQueryFiltersNotionRejects(t *testing.T) {
	h := newHarness(t)
	seedQueue(h)
	tests := map[string]string{
		"unknown property":              `{"property":"Owner","select":{"equals":"x"}}`,
		"condition for another type":    `{"property":"Status","rich_text":{"equals":"READY"}}`,
		"two conditions":                `{"property":"Priority","number":{"equals":1,"greater_than":0}}`,
		"two condition kinds":           `{"property":"Priority","number":{"equals":1},"select":{"equals":"x"}}`,
		"unknown operator":              `{"property":"Priority","number":{"around":1}}`,
		"is_empty false":                `{"property":"Priority","number":{"is_empty":false}}`,
		"number given a string":         `{"property":"Priority","number":{"equals":"1"}}`,
		"date that is not ISO 8601":     `{"property":"Lock Expires","date":{"after":"yesterday"}}`,
		"compound three levels deep":    `{"and":[{"or":[{"and":[{"property":"Priority","number":{"equals":1}}]}]}]}`,
		"compound that is not an array": `{"or":{"property":"Priority","number":{"equals":1}}}`,
		"and beside or":                 `{"and":[],"or":[]}`,
		"unknown timestamp":             `{"timestamp":"deleted_time","deleted_time":{"after":"2026-01-01"}}`,
		"rollup filter":                 `{"property":"Dependencies","rollup":{"any":{}}}`,
		"unique_id is never empty":      `{"property":"ID","unique_id":{"is_empty":true}}`,
		"filter that is a string":       `"Status"`,
		"property without a condition":  `{"property":"Status"}`,
		"equals an empty array":         `{"property":"Status","select":{"equals":[]}}`,
		"equals an array of numbers":    `{"property":"Status","select":{"equals":[1]}}`,
	}
	for name, filter := range tests {
		t.Run(name, func(t *testing.T) {
			h.call("POST", "/v1/databases/"+h.db+"/query", `{"filter":`+filter+`}`).wantError(t, 400, "validation_error")
		})
	}
}

// Sorts are {"property": …, "direction": …} or {"timestamp": …,
// "direction": …}; earlier sorts take precedence. Notion orders select
// values by their position in the schema and puts empty values last.
func TestQuerySorts(t *testing.T) {
	h := newHarness(t)
	seedQueue(h)
	tests := []struct {
		name, sorts string
		want        []string
	}{
		{"none keeps creation order", `[]`, []string{"alpha", "beta", "gamma", "delta", "epsilon"}},
		{"number descending, empty last", `[{"property":"Priority","direction":"descending"}]`, []string{"beta", "alpha", "epsilon", "gamma", "delta"}},
		{"number ascending, empty last", `[{"property":"Priority","direction":"ascending"}]`, []string{"gamma", "alpha", "epsilon", "beta", "delta"}},
		{"select by option order", `[{"property":"Class","direction":"ascending"}]`, []string{"beta", "alpha", "delta", "gamma", "epsilon"}},
		{"title descending", `[{"property":"Name","direction":"descending"}]`, []string{"gamma", "epsilon", "delta", "beta", "alpha"}},
		{"date then unique id", `[{"property":"Lock Expires","direction":"descending"},{"property":"ID","direction":"descending"}]`, []string{"delta", "gamma", "alpha", "epsilon", "beta"}},
		{"timestamp then property", `[{"timestamp":"last_edited_time","direction":"ascending"},{"property":"Priority","direction":"descending"}]`, []string{"beta", "alpha", "epsilon", "gamma", "delta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := titles(h.call("POST", "/v1/databases/"+h.db+"/query", `{"sorts":`+tt.sorts+`}`).mustOK(t).Body)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{
		`[{"property":"Priority","direction":"up"}]`,
		`[{"property":"Owner","direction":"ascending"}]`,
		`[{"timestamp":"created_time","property":"Priority","direction":"ascending"}]`,
		`[{"direction":"ascending"}]`,
		`[{"property":"Dependencies","direction":"ascending"}]`,
		`{"property":"Priority"}`,
	} {
		h.call("POST", "/v1/databases/"+h.db+"/query", `{"sorts":`+bad+`}`).wantError(t, 400, "validation_error")
	}
}

// Queries answer in pages of at most 100 (the default) with next_cursor and
// has_more; the cursor goes back in the next POST body as start_cursor.
func TestQueryPaging(t *testing.T) {
	h := newHarness(t)
	for i := range 250 {
		h.createTask(fmt.Sprintf(`{"Name":{"title":[{"text":{"content":"t%03d"}}]},"Priority":{"number":%d}}`, i, i%7))
	}
	var got []string
	cursor := ""
	var sizes []int
	for {
		body := `{"sorts":[{"property":"Priority","direction":"descending"}]`
		if cursor != "" {
			body += `,"start_cursor":"` + cursor + `"`
		}
		list := h.call("POST", "/v1/databases/"+h.db+"/query", body+"}").mustOK(t).Body
		if list["object"] != "list" || list["type"] != "page_or_database" || list["page_or_database"] == nil {
			t.Fatalf("list header %v", list)
		}
		batch := titles(list)
		sizes = append(sizes, len(batch))
		got = append(got, batch...)
		if list["has_more"] == false {
			if list["next_cursor"] != nil {
				t.Fatalf("last batch next_cursor %v, want null", list["next_cursor"])
			}
			break
		}
		cursor = list["next_cursor"].(string)
		// A page created mid-listing sorts last (priority 0, newest) and
		// must not shift what the cursor resumes from.
		h.createTask(`{"Name":{"title":[{"text":{"content":"late"}}]},"Priority":{"number":-1}}`)
	}
	if !reflect.DeepEqual(sizes, []int{100, 100, 52}) {
		t.Errorf("batch sizes %v, want [100 100 52]", sizes)
	}
	if got[0] != "t006" || got[1] != "t013" || got[249] != "t245" {
		t.Errorf("order starts %v and ends %v, want priority 6 first in creation order, priority 0 last", got[:2], got[249])
	}
	seen := map[string]bool{}
	for _, name := range got {
		if seen[name] && name != "late" {
			t.Errorf("%s listed twice", name)
		}
		seen[name] = true
	}
	if len(seen) != 251 {
		t.Errorf("%d distinct pages listed, want 251", len(seen))
	}
	small := h.call("POST", "/v1/databases/"+h.db+"/query", `{"page_size":7}`).mustOK(t).Body
	if n := len(small["results"].([]any)); n != 7 || small["has_more"] != true {
		t.Errorf("page_size 7 gave %d results, has_more %v", n, small["has_more"])
	}
}

// Notion rounds created_time and last_edited_time down to the minute, so a
// poller filtering {"timestamp": "last_edited_time", "last_edited_time":
// {"on_or_after": T}} must overlap its window.
func TestLastEditedTimeIsRoundedDownToTheMinute(t *testing.T) {
	h := newHarness(t) // clock at 02:15:42.123
	page := h.createTask(titled("rounded"))
	if page["created_time"] != "2026-02-01T02:15:00.000Z" || page["last_edited_time"] != "2026-02-01T02:15:00.000Z" {
		t.Fatalf("created %v edited %v, want both 02:15:00.000Z", page["created_time"], page["last_edited_time"])
	}
	id := page["id"].(string)
	h.createTask(titled("untouched"))

	h.clock.Advance(50 * time.Second) // 02:16:32
	edited := h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Agent":{"rich_text":[{"text":{"content":"x"}}]}}}`).mustOK(t).Body
	if edited["last_edited_time"] != "2026-02-01T02:16:00.000Z" || edited["created_time"] != "2026-02-01T02:15:00.000Z" {
		t.Fatalf("after edit: created %v edited %v", edited["created_time"], edited["last_edited_time"])
	}
	since := func(at string) []string {
		return titles(h.call("POST", "/v1/databases/"+h.db+"/query",
			`{"filter":{"timestamp":"last_edited_time","last_edited_time":{"on_or_after":"`+at+`"}}}`).mustOK(t).Body)
	}
	// The edit happened at 02:16:32 but reads as 02:16:00: a watermark taken
	// at the edit's real time misses it.
	if got := since("2026-02-01T02:16:32Z"); len(got) != 0 {
		t.Errorf("on_or_after the real edit time: %v, want none (rounded down)", got)
	}
	if got := since("2026-02-01T02:16:00Z"); !reflect.DeepEqual(got, []string{"rounded"}) {
		t.Errorf("on_or_after the rounded minute: %v, want [rounded]", got)
	}
	if got := since("2026-02-01T02:15:00Z"); len(got) != 2 {
		t.Errorf("on_or_after the first minute: %v, want both", got)
	}
	h.clock.Advance(time.Minute)
	archived := h.call("PATCH", "/v1/pages/"+id, `{"archived":true}`).mustOK(t).Body
	if archived["last_edited_time"] != "2026-02-01T02:17:00.000Z" {
		t.Errorf("archiving left last_edited_time %v", archived["last_edited_time"])
	}
}

// One query answers at most the result limit; past it pagination stops,
// has_more is false, and every page of the answer says the result is
// incomplete (https://developers.notion.com/guides/data-apis/query-large-data-sources).
// A query under the limit says nothing.
func TestAQueryPastTheResultLimitSaysItIsIncomplete(t *testing.T) {
	h := newHarness(t)
	h.srv.SetQueryResultLimit(3)
	for i := range 5 {
		h.createTask(fmt.Sprintf(`{"Name":{"title":[{"text":{"content":"t%d"}}]}}`, i))
	}
	first := h.call("POST", "/v1/databases/"+h.db+"/query", `{"page_size":2}`).mustOK(t).Body
	last := h.call("POST", "/v1/databases/"+h.db+"/query", `{"page_size":2,"start_cursor":"`+first["next_cursor"].(string)+`"}`).mustOK(t).Body
	incomplete := map[string]any{"type": "incomplete", "incomplete_reason": "query_result_limit_reached"}
	for i, page := range []map[string]any{first, last} {
		if !reflect.DeepEqual(page["request_status"], incomplete) {
			t.Errorf("answer %d: request_status %v, want %v", i+1, page["request_status"], incomplete)
		}
	}
	if got := append(titles(first), titles(last)...); len(got) != 3 || last["has_more"] != false {
		t.Errorf("a capped query gave %v, has_more %v; want 3 pages and no more", got, last["has_more"])
	}
	narrow := h.call("POST", "/v1/databases/"+h.db+"/query", `{"filter":{"property":"Name","title":{"equals":"t1"}}}`).mustOK(t).Body
	if _, said := narrow["request_status"]; said {
		t.Errorf("a query under the limit says %v", narrow["request_status"])
	}
}
