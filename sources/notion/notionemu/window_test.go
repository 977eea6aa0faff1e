package notionemu

import (
	"reflect"
	"testing"
	"time"
)

// windowed is a database on the fake clock (2026-02-01T02:15:42Z) whose
// Status is a select, or a status when statusType: pages finished a day
// ago, live ones, and one finished just now.
func windowed(t *testing.T, statusType bool) *harness {
	t.Helper()
	h := newHarness(t)
	typ, key := TypeSelect, "select"
	if statusType {
		typ, key = TypeStatus, "status"
	}
	db, err := h.srv.CreateDatabase(DatabaseSchema{Title: "Tasks", Properties: []Property{
		{Name: "Name", Type: TypeTitle},
		{Name: "Status", Type: typ, Options: []string{"READY", "IN_PROGRESS", "DONE", "CANCELED", "FAILED"}},
	}}, testToken)
	if err != nil {
		t.Fatal(err)
	}
	h.db = db
	page := func(name, status string) {
		props := `"Name":{"title":[{"text":{"content":"` + name + `"}}]}`
		if status != "" {
			props += `,"Status":{"` + key + `":{"name":"` + status + `"}}`
		}
		h.createTask("{" + props + "}")
	}
	h.clock.Advance(-24 * time.Hour)
	page("old done", "DONE")
	page("old canceled", "CANCELED")
	page("old ready", "READY")
	if !statusType {
		page("old without status", "")
	}
	h.clock.Advance(24 * time.Hour)
	page("done now", "DONE")
	page("ready now", "READY")
	return h
}

// The two filters claimdeck's Notion source sends, on a select and on a
// status property: live work (any status but the final ones, none, or a
// recent edit) and history (a final status, edited before the horizon,
// with a title text), one compound inside another.
func TestWindowFiltersOnSelectAndStatus(t *testing.T) {
	for _, statusType := range []bool{false, true} {
		key := map[bool]string{false: "select", true: "status"}[statusType]
		t.Run(key, func(t *testing.T) {
			h := windowed(t, statusType)
			cond := func(op, v string) string { return `{"property":"Status","` + key + `":{"` + op + `":` + v + `}}` }
			live := `{"or":[{"and":[` + cond("does_not_equal", `"CANCELED"`) + `,` + cond("does_not_equal", `"DONE"`) + `,` + cond("does_not_equal", `"FAILED"`) + `]},` +
				cond("is_empty", "true") + `,{"timestamp":"last_edited_time","last_edited_time":{"on_or_after":"2026-02-01T01:15:00Z"}}]}`
			history := `{"and":[{"or":[` + cond("equals", `"CANCELED"`) + `,` + cond("equals", `"DONE"`) + `,` + cond("equals", `"FAILED"`) + `]},` +
				`{"timestamp":"last_edited_time","last_edited_time":{"before":"2026-02-01T01:15:00Z"}},{"property":"Name","rich_text":{"contains":"DONE"}}]}`
			wantLive := []string{"old ready", "done now", "ready now"}
			notDone := []string{"old canceled", "old ready", "ready now"}
			if !statusType {
				wantLive = []string{"old ready", "old without status", "done now", "ready now"}
				notDone = []string{"old canceled", "old ready", "old without status", "ready now"}
			}
			for _, c := range []struct {
				what, filter string
				want         []string
			}{
				{"live work", live, wantLive},
				{"history with a title text in another case", history, []string{"old done"}},
				{"does_not_equal lets a page without a value through", cond("does_not_equal", `"DONE"`), notDone},
			} {
				got := titles(h.call("POST", "/v1/databases/"+h.db+"/query", `{"filter":`+c.filter+`}`).mustOK(t).Body)
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("%s: got %v, want %v", c.what, got, c.want)
				}
			}
			other := map[bool]string{false: "status", true: "select"}[statusType]
			h.call("POST", "/v1/databases/"+h.db+"/query", `{"filter":{"property":"Status","`+other+`":{"equals":"DONE"}}}`).wantError(t, 400, "validation_error")
		})
	}
}

// "If a date string with a time is provided, then the comparison is done
// with millisecond precision": a page edited at 02:15:00 is on or after
// 02:15:00.0004 and not on or after 02:15:00.001.
func TestTimestampFiltersCompareToTheMillisecond(t *testing.T) {
	h := newHarness(t)
	h.createTask(titled("edited at 02:15"))
	for _, c := range []struct {
		cond string
		want []string
	}{
		{`{"on_or_after":"2026-02-01T02:15:00.0004Z"}`, []string{"edited at 02:15"}},
		{`{"on_or_after":"2026-02-01T02:15:00.001Z"}`, nil},
		{`{"before":"2026-02-01T02:15:00.001Z"}`, []string{"edited at 02:15"}},
		{`{"before":"2026-02-01T02:15:00Z"}`, nil},
		{`{"on_or_after":"2026-02-01T02:15:00"}`, []string{"edited at 02:15"}}, // no offset: UTC
	} {
		got := titles(h.call("POST", "/v1/databases/"+h.db+"/query", `{"filter":{"timestamp":"last_edited_time","last_edited_time":`+c.cond+`}}`).mustOK(t).Body)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("last_edited_time %s: got %v, want %v", c.cond, got, c.want)
		}
	}
}

// filter_properties limits the properties each page of a query answer
// carries; an id the data source lacks is refused.
func TestFilterPropertiesLimitsTheAnswer(t *testing.T) {
	h := newHarness(t)
	seedQueue(h)
	list := h.call("POST", "/v1/databases/"+h.db+"/query?filter_properties=title", `{}`).mustOK(t).Body
	for _, r := range list["results"].([]any) {
		props := r.(map[string]any)["properties"].(map[string]any)
		if _, ok := props["Name"]; !ok || len(props) != 1 {
			t.Fatalf("filter_properties=title answered with %v", props)
		}
	}
	if got := titles(list); len(got) != 5 {
		t.Fatalf("%d pages, want 5", len(got))
	}
	h.call("POST", "/v1/databases/"+h.db+"/query?filter_properties=nope", `{}`).wantError(t, 400, "validation_error")
}
