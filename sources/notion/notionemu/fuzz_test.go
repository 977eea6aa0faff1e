package notionemu

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// checkAnswer holds for any request body: the emulator never panics, and it
// either succeeds or answers 400 with Notion's error object.
func checkAnswer(t *testing.T, srv *Server, method, path string, body []byte) {
	checkAnswerAs(t, srv, NotionVersion, method, path, body)
}

func checkAnswerAs(t *testing.T, srv *Server, version, method, path string, body []byte) {
	req := httptest.NewRequest(method, path, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Notion-Version", version)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	var answer map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, rec.Body)
	}
	switch rec.Code {
	case http.StatusOK:
		if answer["object"] == "error" {
			t.Fatalf("200 with an error object: %v", answer)
		}
	case http.StatusBadRequest:
		code := answer["code"]
		if answer["object"] != "error" || answer["status"] != 400.0 || answer["message"] == "" ||
			(code != "validation_error" && code != "invalid_json") {
			t.Fatalf("400 without the documented error shape: %v", answer)
		}
	case http.StatusNotFound:
		if answer["code"] != "object_not_found" {
			t.Fatalf("404 without object_not_found: %v", answer)
		}
	default:
		t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
	}
}

func FuzzQueryFilter(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `{"page_size":100}`, `{"start_cursor":"x"}`,
		`{"filter":{"property":"Status","select":{"equals":"READY"}}}`,
		`{"filter":{"and":[{"property":"Priority","number":{"greater_than":1}},{"or":[{"property":"Lock Expires","date":{"is_empty":true}}]}]}}`,
		`{"filter":{"timestamp":"last_edited_time","last_edited_time":{"on_or_after":"2026-02-01T00:00:00Z"}}}`,
		`{"filter":{"property":"Agent","rich_text":{"contains":"x"}},"sorts":[{"property":"Class","direction":"ascending"}]}`,
		`{"filter":{"property":"ID","unique_id":{"equals":1}},"sorts":[{"timestamp":"created_time","direction":"descending"}]}`,
	} {
		f.Add([]byte(seed))
	}
	h := newHarness(f)
	seedQueue(h)
	path := "/v1/databases/" + h.db + "/query"
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAnswer(t, h.srv, "POST", path, body)
	})
}

// A status filter under each version, with and without the status group
// beta header: groups, option names and group names in either operator.
func FuzzStatusFilter(f *testing.F) {
	for _, seed := range []string{
		`{"filter":{"property":"Status","status":{"equals":"Ready"}}}`,
		`{"filter":{"property":"Status","status":{"equals":"To-do"}}}`,
		`{"filter":{"property":"Status","status":{"does_not_equal":["Complete","Ready"]}}}`,
		`{"filter":{"property":"Status","status":{"group":{"equals":"To-do"}}}}`,
		`{"filter":{"property":"Status","status":{"group":{"does_not_equal":["Complete"]}}}}`,
		`{"filter":{"property":"Status","status":{"group":{}}}}`,
		`{"filter":{"property":"Status","status":{"group":"To-do"}}}`,
		`{"filter":{"or":[{"property":"Status","status":{"is_empty":true}},{"property":"Status","status":{"group":{"equals":null}}}]}}`,
	} {
		for _, mode := range []byte{0, 1, 2} {
			f.Add([]byte(seed), mode)
		}
	}
	h, ds := todayHarness(f)
	path := "/v1/data_sources/" + ds + "/query?filter_properties=title"
	f.Fuzz(func(t *testing.T, body []byte, mode byte) {
		version := []string{TrashVersion, TitleOnlyVersion}[mode%2]
		req := httptest.NewRequest("POST", path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Notion-Version", version)
		if mode%3 == 2 {
			req.Header.Set("Notion-Beta", StatusGroupBeta)
		}
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		var answer map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("answer is not JSON: %v: %s", err, rec.Body)
		}
		if rec.Code != http.StatusOK && (rec.Code != http.StatusBadRequest || answer["object"] != "error") {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
	})
}

func FuzzPagePatch(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"archived":false}`, `{"in_trash":true}`,
		`{"properties":{"Claimed By":{"select":null},"Priority":{"number":null}}}`,
		`{"properties":{"Status":{"select":{"name":"READY"}},"Lock Expires":{"date":{"start":"2026-02-01T02:35:00Z","end":null,"time_zone":"UTC"}}}}`,
		`{"properties":{"Agent":{"rich_text":[{"type":"text","text":{"content":"a","link":{"url":"u"}},"annotations":{"bold":true,"color":"red"}}]}}}`,
		`{"properties":{"Class":{"select":{"name":"NEW"}},"Name":{"title":[]}}}`,
	} {
		f.Add([]byte(seed))
	}
	h := newHarness(f)
	id := h.createTask(titled("fuzzed"))["id"].(string)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAnswer(t, h.srv, "PATCH", "/v1/pages/"+id, body)
	})
}

// FuzzPageCreate covers the parents of 2025-09-03: a data source, or a
// database that must then have exactly one.
func FuzzPageCreate(f *testing.F) {
	h := newHarness(f)
	ds := h.srv.DataSources(h.db)[0]
	for _, seed := range []string{
		`{"parent":{"type":"data_source_id","data_source_id":"` + ds + `"},"properties":{"Name":{"title":[{"text":{"content":"x"}}]}}}`,
		`{"parent":{"database_id":"` + h.db + `"},"properties":{}}`,
		`{"parent":{"data_source_id":"` + ds + `","database_id":"` + h.db + `"},"properties":{"Status":{"status":{"name":"READY"}}}}`,
		`{"parent":{"data_source_id":7}}`, `{"parent":null}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAnswerAs(t, h.srv, DataSourceVersion, "POST", "/v1/pages", body)
	})
}

// FuzzTodaysPagePatch covers the people, relation, status and rollup
// properties of a database set up by today's notion-task skill: any body
// is applied or refused with Notion's error, and a refused one changes
// nothing on the page or its relatives.
func FuzzTodaysPagePatch(f *testing.F) {
	h := newToday(f)
	parent := h.createTask(named("parent"))["id"].(string)
	id := h.createTask(named("fuzzed"))["id"].(string)
	for _, seed := range []string{
		`{"properties":{"Status":{"status":{"name":"In Progress"}},"Assignee":{"people":[{"object":"user","id":"` + alice + `"}]}}}`,
		`{"properties":{"Parent-task":{"relation":[{"id":"` + parent + `"}]}}}`,
		`{"properties":{"Sub-tasks":{"relation":[{"id":"` + parent + `"},{"id":"` + parent + `"}]}}}`,
		`{"properties":{"Assignee":{"people":[{"id":7}]}}}`,
		`{"properties":{"Dependencies":{"rollup":{"number":1}}}}`,
		`{"properties":{"Status":{"status":null}}}`,
		`{"properties":{"Lock Expires":{"date":null},"Lock Token":{"rich_text":[]}}}`,
	} {
		f.Add([]byte(seed))
	}
	read := func(page string) string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/v1/pages/"+page, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Notion-Version", NotionVersion)
		h.srv.ServeHTTP(rec, req)
		var p map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		b, _ := json.Marshal(p["properties"])
		return string(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		before, parentBefore := read(id), read(parent)
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("PATCH", "/v1/pages/"+id, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Notion-Version", NotionVersion)
		h.srv.ServeHTTP(rec, req)
		checkAnswer(t, h.srv, "GET", "/v1/pages/"+parent, nil)
		if rec.Code != http.StatusOK && (read(id) != before || read(parent) != parentBefore) {
			t.Fatalf("a refused update (%d) changed a page: %s", rec.Code, body)
		}
	})
}
