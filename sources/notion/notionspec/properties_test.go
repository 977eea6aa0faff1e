package notionspec

import (
	"net/http"
	"strings"
	"testing"
)

// schema is a data source as Notion answers GET /v1/data_sources/{id}:
// the ntask preset's kinds of property.
const schema = `{"object": "data_source", "id": "ds-1", "properties": {
	"Name": {"id": "title", "type": "title", "title": {}},
	"Status": {"id": "s1", "type": "select", "select": {"options": [{"name": "READY"}, {"name": "IN_PROGRESS"}]}},
	"Stage": {"id": "s2", "type": "status", "status": {"options": [{"name": "Not started"}, {"name": "Done"}]}},
	"Lock Expires": {"id": "d1", "type": "date", "date": {}},
	"Lock Token": {"id": "r1", "type": "rich_text", "rich_text": {}},
	"Priority": {"id": "n1", "type": "number", "number": {}},
	"Tags": {"id": "m1", "type": "multi_select", "multi_select": {"options": [{"name": "ops"}]}},
	"ID": {"id": "u1", "type": "unique_id", "unique_id": {}}}}`

func learned(t *testing.T) *Properties {
	t.Helper()
	p := NewProperties()
	p.Learn([]byte(schema))
	p.Learn([]byte(`{"object": "list", "results": [{"object": "page", "id": "page-1", "parent": {"type": "data_source_id", "data_source_id": "ds-1"}}]}`))
	return p
}

func TestPagePropertiesHeldToTheDataSourcesSchema(t *testing.T) {
	p := learned(t)
	for _, c := range []struct {
		name, method, path, body, refusal string
	}{
		{"a claim as claimdeck writes it", "PATCH", "/v1/pages/page-1", `{"properties": {
			"Status": {"select": {"name": "IN_PROGRESS"}}, "Lock Token": {"rich_text": [{"text": {"content": "6646e9ae"}}]},
			"Lock Expires": {"date": {"start": "2026-11-27T09:30:39.441Z"}}}}`, ""},
		{"a date, a date-time with an offset, a cleared date", "PATCH", "/v1/pages/page-1", `{"properties": {
			"Lock Expires": {"date": {"start": "2026-03-11", "end": "2026-03-11T10:00:00+02:00", "time_zone": null}}, "Priority": {"number": null}}}`, ""},
		{"a create naming its data source", "POST", "/v1/pages", `{"parent": {"data_source_id": "ds-1"}, "properties": {
			"Name": {"title": [{"text": {"content": "t"}}]}, "Stage": {"status": {"name": "Done"}}, "Tags": {"multi_select": [{"name": "ops"}]}}}`, ""},
		{"a property known by its id", "PATCH", "/v1/pages/page-1", `{"properties": {"s1": {"select": {"name": "READY"}}}}`, ""},
		{"a lock expiry with a space for the T", "PATCH", "/v1/pages/page-1", `{"properties": {"Lock Expires": {"date": {"start": "2026-11-27 09:30:39"}}}}`, `start "2026-11-27 09:30:39" is not an ISO 8601 date`},
		{"a lock expiry as epoch seconds", "PATCH", "/v1/pages/page-1", `{"properties": {"Lock Expires": {"date": {"start": 1795772439}}}}`, "start: the value must be an ISO 8601 date string"},
		{"a day the calendar lacks", "PATCH", "/v1/pages/page-1", `{"properties": {"Lock Expires": {"date": {"start": "2026-02-30"}}}}`, "is not an ISO 8601 date"},
		{"a date without a start", "PATCH", "/v1/pages/page-1", `{"properties": {"Lock Expires": {"date": {"end": "2026-02-03"}}}}`, "a date needs a start"},
		{"a select option the schema lacks, which Notion creates", "PATCH", "/v1/pages/page-1", `{"properties": {"Status": {"select": {"name": "FAILED"}}, "Tags": {"multi_select": [{"name": "new"}]}}}`, ""},
		{"a select option no option can be named", "PATCH", "/v1/pages/page-1", `{"properties": {"Status": {"select": {"name": "DONE, FAILED"}}}}`, `"DONE, FAILED" cannot be an option`},
		{"a status option the schema lacks", "PATCH", "/v1/pages/page-1", `{"properties": {"Stage": {"status": {"name": "In progress"}}}}`, `"In progress" is not one of its options (Not started, Done): a status option must exist`},
		{"a select written as a status", "PATCH", "/v1/pages/page-1", `{"properties": {"Status": {"status": {"name": "READY"}}}}`, `a select value has no "status"`},
		{"a rich text written as a string", "PATCH", "/v1/pages/page-1", `{"properties": {"Lock Token": {"rich_text": "6646e9ae"}}}`, "must be a list of rich text objects"},
		{"a property the schema lacks", "PATCH", "/v1/pages/page-1", `{"properties": {"Lock token": {"rich_text": []}}}`, `property "Lock token" is not in data source ds-1's schema`},
		{"a computed property", "PATCH", "/v1/pages/page-1", `{"properties": {"ID": {"unique_id": {"number": 3}}}}`, "Notion computes a unique_id"},
		{"a number as a string", "PATCH", "/v1/pages/page-1", `{"properties": {"Priority": {"number": "3"}}}`, "must be a number or null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := p.Check(c.method, c.path, []byte(c.body))
			switch {
			case c.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refusal != "" && err == nil:
				t.Fatal("passed")
			case c.refusal != "" && !strings.Contains(err.Error(), c.refusal):
				t.Fatalf("the refusal does not say %q: %v", c.refusal, err)
			}
		})
	}
	if p.Checked() == 0 {
		t.Error("no property was counted as checked")
	}
}

// A page whose data source is not known passes while another data source
// is known too; reads are not page writes.
func TestWhatPropertiesDoNotJudge(t *testing.T) {
	p := learned(t)
	p.Learn([]byte(`{"object": "data_source", "id": "ds-2", "properties": {}}`))
	if err := p.Check(http.MethodPatch, "/v1/pages/unknown", []byte(`{"properties": {"X": {"select": {"name": "?"}}}}`)); err != nil {
		t.Errorf("a page of an unknown data source was judged: %v", err)
	}
	if err := p.Check(http.MethodPost, "/v1/data_sources/ds-1/query", []byte(`{"filter": {}}`)); err != nil {
		t.Errorf("a query was judged: %v", err)
	}
	if err := p.Check(http.MethodPatch, "/v1/pages/page-1", []byte(`not json`)); err == nil {
		t.Error("a page write whose body is not JSON passed")
	}
}

// FuzzPropertiesCheck: whatever the answers and the request, Learn and
// Check neither panic nor pass a page write whose body is not an object.
func FuzzPropertiesCheck(f *testing.F) {
	f.Add([]byte(schema), []byte(`{"properties": {"Lock Expires": {"date": {"start": "2026-11-27 09:30:39"}}}}`))
	f.Add([]byte(`{"object": "list", "results": [1, {"object": "page"}]}`), []byte(`{"properties": {"Status": {"select": null}}}`))
	f.Fuzz(func(t *testing.T, answer, body []byte) {
		p := learned(t)
		p.Learn(answer)
		err := p.Check(http.MethodPatch, "/v1/pages/page-1", body)
		if err == nil && len(strings.TrimSpace(string(body))) > 0 && strings.TrimSpace(string(body))[0] != '{' {
			t.Fatalf("a body that is not an object passed: %q", body)
		}
	})
}
