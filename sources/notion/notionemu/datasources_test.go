package notionemu

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// as sends a request under a given Notion-Version.
func (h *harness) as(version, method, path, body string) response {
	h.t.Helper()
	return h.send(method, path, body, map[string]string{"Authorization": "Bearer " + testToken, "Notion-Version": version})
}

func TestADatabaseWithTwoDataSourcesFollowsTheUpgradeGuide(t *testing.T) {
	h := newHarness(t)
	first := h.srv.DataSources(h.db)[0]
	second, err := h.srv.AddDataSource(h.db, DatabaseSchema{Title: "Archive", Properties: []Property{{Name: "Name", Type: TypeTitle}}})
	if err != nil {
		t.Fatal(err)
	}
	// The old version refuses the database in every form, naming the children.
	for _, req := range [][3]string{
		{"GET", "/v1/databases/" + h.db, ""},
		{"POST", "/v1/databases/" + h.db + "/query", "{}"},
		{"POST", "/v1/pages", `{"parent":{"database_id":"` + h.db + `"},"properties":` + titled("x") + `}`},
	} {
		r := h.call(req[0], req[1], req[2])
		r.wantError(t, 400, "validation_error")
		extra, _ := r.Body["additional_data"].(map[string]any)
		ids, _ := extra["child_data_source_ids"].([]any)
		if extra["error_type"] != "multiple_data_sources_for_database" || len(ids) != 2 || ids[0] != first || ids[1] != second ||
			extra["minimum_api_version"] != DataSourceVersion || r.Body["request_id"] == "" {
			t.Fatalf("%s %s: additional_data %v", req[0], req[1], r.Body)
		}
	}
	// 2025-09-03 lists them and reaches each one.
	db := h.as(DataSourceVersion, "GET", "/v1/databases/"+h.db, "").mustOK(t).Body
	list, _ := db["data_sources"].([]any)
	if len(list) != 2 || list[1].(map[string]any)["name"] != "Archive" || db["properties"] != nil {
		t.Fatalf("database under %s: %v", DataSourceVersion, db)
	}
	ds := h.as(DataSourceVersion, "GET", "/v1/data_sources/"+second, "").mustOK(t).Body
	if ds["object"] != "data_source" || ds["parent"].(map[string]any)["database_id"] != h.db || len(ds["properties"].(map[string]any)) != 1 {
		t.Fatalf("data source: %v", ds)
	}
	page := h.as(DataSourceVersion, "POST", "/v1/pages", `{"parent":{"type":"data_source_id","data_source_id":"`+second+`"},"properties":`+titled("in archive")+`}`).mustOK(t).Body
	if p := page["parent"].(map[string]any); p["type"] != "data_source_id" || p["data_source_id"] != second || p["database_id"] != h.db {
		t.Fatalf("page parent: %v", p)
	}
	got := titles(h.as(DataSourceVersion, "POST", "/v1/data_sources/"+second+"/query", "{}").mustOK(t).Body)
	if !slices.Equal(got, []string{"in archive"}) {
		t.Fatalf("query of the second data source: %v", got)
	}
	if got := titles(h.as(DataSourceVersion, "POST", "/v1/data_sources/"+first+"/query", "{}").mustOK(t).Body); len(got) != 0 {
		t.Fatalf("query of the first data source: %v", got)
	}
	h.as(DataSourceVersion, "POST", "/v1/databases/"+h.db+"/query", "{}").wantError(t, 400, "invalid_request_url")
	h.call("GET", "/v1/data_sources/"+first, "").wantError(t, 400, "invalid_request_url")
}

func TestTheTrashFlagIsNamedAsEachVersionNamesIt(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("t"))["id"].(string)
	h.call("PATCH", "/v1/pages/"+id, `{"in_trash":true}`).mustOK(t)
	old := h.call("GET", "/v1/pages/"+id, "").mustOK(t).Body
	late := h.as(TrashVersion, "GET", "/v1/pages/"+id, "").mustOK(t).Body
	if old["archived"] != true || old["in_trash"] != true {
		t.Fatalf("%s: %v %v", NotionVersion, old["archived"], old["in_trash"])
	}
	if _, has := late["archived"]; has || late["in_trash"] != true {
		t.Fatalf("%s: %v", TrashVersion, late)
	}
}

func TestCommentsNeedTheirCapabilities(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("t"))["id"].(string)
	h.srv.SetCapabilities(testToken, Capabilities{})
	h.call("GET", "/v1/comments?block_id="+id, "").wantError(t, 403, "restricted_resource")
	h.call("POST", "/v1/comments", `{"parent":{"page_id":"`+id+`"},"rich_text":[{"text":{"content":"x"}}]}`).wantError(t, 403, "restricted_resource")
	h.srv.SetCapabilities(testToken, Capabilities{ReadComments: true})
	h.call("GET", "/v1/comments?block_id="+id, "").mustOK(t)
}

func TestAnAppliedFaultWritesAndThenFails(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("before"))["id"].(string)
	if err := h.srv.Inject(1, Fault{Endpoint: EndpointPageUpdate, Status: http.StatusGatewayTimeout, Apply: true}); err != nil {
		t.Fatal(err)
	}
	h.call("GET", "/v1/pages/"+id, "").mustOK(t) // another endpoint leaves the fault queued
	h.call("PATCH", "/v1/pages/"+id, `{"properties":`+titled("after")+`}`).wantError(t, 504, "gateway_timeout")
	page := h.call("GET", "/v1/pages/"+id, "").mustOK(t).Body
	if title := prop(page, "Name").([]any); title[0].(map[string]any)["plain_text"] != "after" {
		t.Fatalf("the write was not applied: %v", title)
	}
}

func TestWritesTooCloseTogetherConflict(t *testing.T) {
	h := newHarness(t)
	id := h.createTask(titled("t"))["id"].(string)
	h.srv.SetConflictWindow(time.Hour)
	h.call("PATCH", "/v1/pages/"+id, `{"properties":`+titled("a")+`}`).mustOK(t)
	h.call("PATCH", "/v1/pages/"+id, `{"properties":`+titled("b")+`}`).wantError(t, 409, "conflict_error")
	h.srv.SetConflictWindow(0)
	h.call("PATCH", "/v1/pages/"+id, `{"properties":`+titled("b")+`}`).mustOK(t)
}

func TestAWindowedRateLimitAsksToWaitOutTheWindow(t *testing.T) {
	h := newHarness(t)
	h.srv.SetRateLimit(RateLimit{PerSecond: 0.05, Window: 80 * time.Second}) // 4 requests per 80 s
	for range 4 {
		h.call("GET", "/v1/databases/"+h.db, "").mustOK(t)
	}
	h.clock.Advance(10 * time.Second)
	r := h.call("GET", "/v1/databases/"+h.db, "")
	r.wantError(t, 429, "rate_limited")
	if got := r.Header.Get("Retry-After"); got != "70" {
		t.Fatalf("Retry-After %q, want 70", got)
	}
	h.clock.Advance(70 * time.Second)
	h.call("GET", "/v1/databases/"+h.db, "").mustOK(t)
}

func TestAnInjected429CarriesItsRetryAfter(t *testing.T) {
	h := newHarness(t)
	if err := h.srv.Inject(1, Fault{Status: http.StatusTooManyRequests, RetryAfter: 90 * time.Second}); err != nil {
		t.Fatal(err)
	}
	r := h.call("GET", "/v1/databases/"+h.db, "")
	r.wantError(t, 429, "rate_limited")
	if got := r.Header.Get("Retry-After"); got != fmt.Sprint(90) {
		t.Fatalf("Retry-After %q", got)
	}
}

func TestThePagePropertyEndpointHasTheExactRollup(t *testing.T) {
	h := newHarness(t)
	if _, err := h.srv.AddDataSource(h.db, DatabaseSchema{Title: "unused", Properties: []Property{{Name: "Name", Type: TypeTitle}}}); err != nil {
		t.Fatal(err)
	}
	ds := h.srv.DataSources(h.db)[0]
	page := h.as(DataSourceVersion, "POST", "/v1/pages", `{"parent":{"data_source_id":"`+ds+`"},"properties":`+titled("epic")+`}`).mustOK(t).Body
	id := page["id"].(string)
	if err := h.srv.SetComputed(id, "Dependencies", []byte(`{"type":"number","number":30,"function":"count"}`)); err != nil {
		t.Fatal(err)
	}
	if err := h.srv.SetComputedPageView(id, "Dependencies", []byte(`{"type":"number","number":25,"function":"count"}`)); err != nil {
		t.Fatal(err)
	}
	shown := prop(h.as(DataSourceVersion, "GET", "/v1/pages/"+id, "").mustOK(t).Body, "Dependencies").(map[string]any)
	props := h.as(DataSourceVersion, "GET", "/v1/data_sources/"+ds, "").mustOK(t).Body["properties"].(map[string]any)
	propID := props["Dependencies"].(map[string]any)["id"].(string)
	item := h.as(DataSourceVersion, "GET", "/v1/pages/"+id+"/properties/"+propID, "").mustOK(t).Body
	exact := item["property_item"].(map[string]any)["rollup"].(map[string]any)
	if shown["number"] != float64(25) || exact["number"] != float64(30) || item["object"] != "list" {
		t.Fatalf("page shows %v, property item %v", shown, item)
	}
	title := h.as(DataSourceVersion, "GET", "/v1/pages/"+id+"/properties/title", "").mustOK(t).Body
	if r := title["results"].([]any); len(r) != 1 || r[0].(map[string]any)["type"] != "title" {
		t.Fatalf("title item %v", title)
	}
}
