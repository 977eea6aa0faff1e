package notionemu

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Property values come back in the shapes the page-properties reference
// documents, for example
//
//	"Title": {"id": "title", "type": "title", "title": [{"type": "text",
//	  "text": {"content": "Bug bash", "link": null}, "annotations": {"bold":
//	  false, …, "color": "default"}, "plain_text": "Bug bash", "href": null}]}
//	"Status": {"id": "Z%3ClH", "type": "select", "select": {"id": …,
//	  "name": …, "color": …}}
//	"Due date": {"id": "M%3BBw", "type": "date", "date": {"start":
//	  "2023-02-23", "end": null, "time_zone": null}}
//
// and empty select, number and date values read back as null.
func TestPageValuesHaveNotionShapes(t *testing.T) {
	h := newHarness(t)
	page := h.createTask(`{
		"Name": {"title": [{"text": {"content": "Ship it", "link": {"url": "https://example.com"}}, "annotations": {"bold": true}}]},
		"Status": {"select": {"name": "READY"}},
		"Priority": {"number": 7.5},
		"Lock Expires": {"date": {"start": "2026-02-01T02:35:00Z"}},
		"StartedAt": {"date": {"start": "2026-02-01"}}
	}`)
	tests := []struct {
		property string
		want     string
	}{
		{"Name", `[{"type":"text","text":{"content":"Ship it","link":{"url":"https://example.com"}},"annotations":{"bold":true,"italic":false,"strikethrough":false,"underline":false,"code":false,"color":"default"},"plain_text":"Ship it","href":"https://example.com"}]`},
		{"Agent", `[]`},
		{"Priority", `7.5`},
		{"Claimed By", `null`},
		{"DoneAt", `null`},
		{"Lock Expires", `{"start":"2026-02-01T02:35:00.000+00:00","end":null,"time_zone":null}`},
		{"StartedAt", `{"start":"2026-02-01","end":null,"time_zone":null}`},
		{"ID", `{"prefix":"TASK","number":1}`},
		{"Dependencies", `{"type":"number","number":0,"function":"count"}`},
	}
	for _, tt := range tests {
		var want any
		if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatal(err)
		}
		if got := prop(page, tt.property); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", tt.property, got, want)
		}
	}
	status := prop(page, "Status").(map[string]any)
	if status["name"] != "READY" || status["id"] == "" || status["color"] == "" {
		t.Errorf("Status = %v, want {id, name READY, color}", status)
	}
	if page["object"] != "page" || page["archived"] != false || page["in_trash"] != false {
		t.Errorf("page header %v", page)
	}
	parent := page["parent"].(map[string]any)
	if parent["type"] != "database_id" || parent["database_id"] != h.db {
		t.Errorf("parent %v", parent)
	}
	if second := h.createTask(titled("next")); !reflect.DeepEqual(prop(second, "ID"), map[string]any{"prefix": "TASK", "number": 2.0}) {
		t.Errorf("second unique id %v, want TASK-2", prop(second, "ID"))
	}
}

func TestPropertyWritesNotionRejects(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("target"))["id"].(string)
	long := strings.Repeat("x", 2001)
	emoji := strings.Repeat("😀", 1001) // 2,002 UTF-16 code units in 1,001 runes
	tests := []struct {
		name, properties string
	}{
		{"unknown property", `{"Owner": {"rich_text": []}}`},
		{"rich text sent to a select", `{"Status": {"rich_text": [{"text": {"content": "READY"}}]}}`},
		{"select cleared with an empty name", `{"Claimed By": {"select": {"name": ""}}}`},
		{"select option with a comma", `{"Claimed By": {"select": {"name": "AGENT,HUMAN"}}}`},
		{"select option id that does not exist", `{"Claimed By": {"select": {"id": "nope"}}}`},
		{"number as a string", `{"Priority": {"number": "3"}}`},
		{"date without start", `{"Lock Expires": {"date": {"end": "2026-02-01"}}}`},
		{"date that is not ISO 8601", `{"Lock Expires": {"date": {"start": "tomorrow"}}}`},
		{"rich text that is not an array", `{"Agent": {"rich_text": "sandman"}}`},
		{"rich text over 2000 characters", `{"Agent": {"rich_text": [{"text": {"content": "` + long + `"}}]}}`},
		{"rich text over 2000 UTF-16 units", `{"Agent": {"rich_text": [{"text": {"content": "` + emoji + `"}}]}}`},
		{"text object without content", `{"Agent": {"rich_text": [{"text": {}}]}}`},
		{"mention object", `{"Agent": {"rich_text": [{"type": "mention", "mention": {}}]}}`},
		{"unique id is read-only", `{"ID": {"unique_id": {"number": 9}}}`},
		{"rollup is read-only", `{"Dependencies": {"rollup": {"type": "number", "number": 3}}}`},
		{"two values in one property", `{"Priority": {"number": 1, "select": null}}`},
		{"type that disagrees", `{"Priority": {"type": "select", "number": 1}}`},
		{"checkbox-less null title", `{"Name": {"title": null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.call("PATCH", "/v1/pages/"+id, `{"properties":`+tt.properties+`}`).wantError(t, 400, "validation_error")
			body := `{"parent":{"database_id":"` + h.db + `"},"properties":` + tt.properties + `}`
			h.call("POST", "/v1/pages", body).wantError(t, 400, "validation_error")
		})
	}
	if got := h.call("POST", "/v1/databases/"+h.db+"/query", "{}").mustOK(t).Body["results"].([]any); len(got) != 1 {
		t.Errorf("%d pages after rejected creates, want 1", len(got))
	}
}

func TestClearingNeedsNull(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(`{"Name": {"title": []}, "Claimed By": {"select": {"name": "AGENT"}}, "Priority": {"number": 3},
		"Lock Expires": {"date": {"start": "2026-02-01T02:35:00Z"}}, "Lock Token": {"rich_text": [{"text": {"content": "tok"}}]}}`)["id"].(string)
	page := h.call("PATCH", "/v1/pages/"+id, `{"properties": {"Claimed By": {"select": null}, "Priority": {"number": null},
		"Lock Expires": {"date": null}, "Lock Token": {"rich_text": []}}}`).mustOK(t).Body
	for _, name := range []string{"Claimed By", "Priority", "Lock Expires"} {
		if v := prop(page, name); v != nil {
			t.Errorf("%s = %v after clearing, want null", name, v)
		}
	}
	if v := prop(page, "Lock Token").([]any); len(v) != 0 {
		t.Errorf("Lock Token = %v, want []", v)
	}
	again := h.call("GET", "/v1/pages/"+id, "").mustOK(t).Body
	if !reflect.DeepEqual(again["properties"], page["properties"]) {
		t.Errorf("GET disagrees with PATCH answer")
	}
}

// Notion adds a select option that a page names and the schema lacks.
func TestNewSelectOptionJoinsTheSchema(t *testing.T) {
	h := newHarness(t)
	h.createTask(`{"Name": {"title": []}, "Class": {"select": {"name": "RESEARCH"}}}`)
	db := h.call("GET", "/v1/databases/"+h.db, "").mustOK(t).Body
	options := db["properties"].(map[string]any)["Class"].(map[string]any)["select"].(map[string]any)["options"].([]any)
	last := options[len(options)-1].(map[string]any)
	if len(options) != 5 || last["name"] != "RESEARCH" {
		t.Errorf("Class options %v, want RESEARCH appended", options)
	}
}

func TestPropertiesAddressedByID(t *testing.T) {
	h := newHarness(t)
	db := h.call("GET", "/v1/databases/"+h.db, "").mustOK(t).Body
	priorityID := db["properties"].(map[string]any)["Priority"].(map[string]any)["id"].(string)
	page := h.createTask(`{"title": {"title": [{"text": {"content": "by id"}}]}, ` + quote(priorityID) + `: {"number": 4}}`)
	if prop(page, "Priority") != 4.0 || titles(map[string]any{"results": []any{page}})[0] != "by id" {
		t.Errorf("page %v", page["properties"])
	}
}

func TestTrashedPages(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("old"))["id"].(string)
	h.createTask(titled("kept"))
	trashed := h.call("PATCH", "/v1/pages/"+id, `{"in_trash": true}`).mustOK(t).Body
	if trashed["archived"] != true || trashed["in_trash"] != true {
		t.Fatalf("trashed page %v", trashed)
	}
	if got := titles(h.call("POST", "/v1/databases/"+h.db+"/query", "").mustOK(t).Body); !reflect.DeepEqual(got, []string{"kept"}) {
		t.Errorf("query %v, want the trashed page left out", got)
	}
	h.call("GET", "/v1/pages/"+id, "").mustOK(t)
	h.call("PATCH", "/v1/pages/"+id, `{"properties": {"Priority": {"number": 1}}}`).wantError(t, 400, "validation_error")
	h.call("PATCH", "/v1/pages/"+id, `{"archived": false, "in_trash": true}`).wantError(t, 400, "validation_error")
	restored := h.call("PATCH", "/v1/pages/"+id, `{"archived": false, "properties": {"Priority": {"number": 1}}}`).mustOK(t).Body
	if restored["archived"] != false || prop(restored, "Priority") != 1.0 {
		t.Errorf("restored page %v", restored)
	}
}

func TestComputedValues(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("parent"))["id"].(string)
	rollup := json.RawMessage(`{"type":"number","number":2,"function":"count"}`)
	if err := h.srv.SetComputed(id, "Dependencies", rollup); err != nil {
		t.Fatal(err)
	}
	if got := prop(h.call("GET", "/v1/pages/"+id, "").mustOK(t).Body, "Dependencies").(map[string]any); got["number"] != 2.0 {
		t.Errorf("Dependencies = %v", got)
	}
	if err := h.srv.SetComputed(id, "Priority", json.RawMessage(`1`)); err == nil {
		t.Error("SetComputed wrote a modelled property")
	}
	if err := h.srv.SetComputed(id, "Dependencies", json.RawMessage(`{`)); err == nil {
		t.Error("SetComputed took invalid JSON")
	}
}

func TestComments(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("commented"))["id"].(string)
	first := h.call("POST", "/v1/comments", `{"parent":{"page_id":"`+id+`"},"rich_text":[{"text":{"content":"claimed by sandman"}}]}`).mustOK(t).Body
	if first["object"] != "comment" || first["discussion_id"] == "" {
		t.Fatalf("comment %v", first)
	}
	h.call("POST", "/v1/comments", `{"discussion_id":"`+first["discussion_id"].(string)+`","rich_text":[{"text":{"content":"reply"}}]}`).mustOK(t)
	h.call("POST", "/v1/comments", `{"parent":{"page_id":"`+id+`"},"rich_text":[{"text":{"content":"`+strings.Repeat("x", 2001)+`"}}]}`).wantError(t, 400, "validation_error")
	h.call("POST", "/v1/comments", `{"parent":{"page_id":"0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e"},"rich_text":[]}`).wantError(t, 404, "object_not_found")

	list := h.call("GET", "/v1/comments?block_id="+id+"&page_size=1", "").mustOK(t).Body
	if list["type"] != "comment" || list["has_more"] != true || len(list["results"].([]any)) != 1 {
		t.Fatalf("first batch %v", list)
	}
	rest := h.call("GET", "/v1/comments?block_id="+id+"&start_cursor="+list["next_cursor"].(string), "").mustOK(t).Body
	results := rest["results"].([]any)
	if rest["has_more"] != false || len(results) != 1 ||
		results[0].(map[string]any)["rich_text"].([]any)[0].(map[string]any)["plain_text"] != "reply" {
		t.Errorf("second batch %v", rest)
	}
}
