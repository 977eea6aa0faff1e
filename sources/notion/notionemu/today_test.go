package notionemu

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

const alice = "5d7c6e8b-9a51-4b0e-9f3a-2c1d0e4f5a6b"

// newToday is a harness whose database is shaped as today's skill sets it
// up, with one workspace member.
func newToday(t testing.TB) *harness {
	t.Helper()
	h := newHarness(t)
	db, err := h.srv.CreateDatabase(PresetToday(), testToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.srv.AddUser(alice, "Alice Example"); err != nil {
		t.Fatal(err)
	}
	h.db = db
	return h
}

func named(title string) string {
	return `{"Task name":{"title":[{"text":{"content":` + quote(title) + `}}]}}`
}

func TestTodaysStatusHasThreeGroupsAndTakesOnlyItsOwnOptions(t *testing.T) {
	h := newToday(t)
	ds := h.call("GET", "/v1/databases/"+h.db, "").mustOK(t).Body
	status := ds["properties"].(map[string]any)["Status"].(map[string]any)
	if status["type"] != "status" {
		t.Fatalf("Status is %v", status["type"])
	}
	groups := status["status"].(map[string]any)["groups"].([]any)
	var names []string
	for _, g := range groups {
		gm := g.(map[string]any)
		names = append(names, fmt.Sprint(gm["name"], len(gm["option_ids"].([]any))))
	}
	if want := []string{"To-do2", "In Progress3", "Complete2"}; !slices.Equal(names, want) {
		t.Fatalf("groups %v, want %v", names, want)
	}
	page := h.createTask(named("write the report"))
	id := page["id"].(string)
	h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Status":{"status":{"name":"Ready"}}}}`).mustOK(t)
	// A status is written under "status"; an option the property lacks is
	// refused, never created.
	h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Status":{"select":{"name":"Ready"}}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Status":{"status":{"name":"Needs Help"}}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	got := h.call("GET", "/v1/pages/"+id, "").mustOK(t).Body
	if prop(got, "Status").(map[string]any)["name"] != "Ready" {
		t.Fatalf("a refused write changed the status: %v", prop(got, "Status"))
	}
}

func TestTodaysPeopleTakeUserReferencesOfTheWorkspace(t *testing.T) {
	h := newToday(t)
	id := h.createTask(named("t"))["id"].(string)
	h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Assignee":{"rich_text":[{"text":{"content":"alice"}}]}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Assignee":{"people":[{"object":"user","id":"0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e"}]}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Assignee":{"people":[{"name":"Alice Example"}]}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	got := h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Assignee":{"people":[{"object":"user","id":"`+alice+`"}]}}}`).mustOK(t).Body
	people := prop(got, "Assignee").([]any)
	if len(people) != 1 || people[0].(map[string]any)["name"] != "Alice Example" {
		t.Fatalf("Assignee reads %v", people)
	}
	got = h.call("PATCH", "/v1/pages/"+id, `{"properties":{"Assignee":{"people":[]}}}`).mustOK(t).Body
	if len(prop(got, "Assignee").([]any)) != 0 {
		t.Fatalf("Assignee not cleared: %v", prop(got, "Assignee"))
	}
}

func TestTodaysSubtasksAreSyncedAndCountedByReadOnlyRollups(t *testing.T) {
	h := newToday(t)
	parent := h.createTask(named("parent"))["id"].(string)
	var kids []string
	for i := range 3 {
		kid := h.createTask(named(fmt.Sprint("criterion ", i)))["id"].(string)
		h.call("PATCH", "/v1/pages/"+kid, `{"properties":{"Parent-task":{"relation":[{"id":"`+parent+`"}]}}}`).mustOK(t)
		kids = append(kids, kid)
	}
	h.call("PATCH", "/v1/pages/"+kids[0], `{"properties":{"Status":{"status":{"name":"Done"}}}}`).mustOK(t)
	h.call("PATCH", "/v1/pages/"+kids[1], `{"properties":{"Status":{"status":{"name":"Canceled"}}}}`).mustOK(t)
	h.call("PATCH", "/v1/pages/"+kids[2], `{"properties":{"Status":{"status":{"name":"Review"}}}}`).mustOK(t)
	got := h.call("GET", "/v1/pages/"+parent, "").mustOK(t).Body
	if n := len(prop(got, "Sub-tasks").([]any)); n != 3 {
		t.Fatalf("Sub-tasks holds %d pages, want 3 (synced from Parent-task)", n)
	}
	if d, c := prop(got, "Dependencies").(map[string]any)["number"], prop(got, "Completed Sub-tasks").(map[string]any)["number"]; d != 3.0 || c != 2.0 {
		t.Fatalf("Dependencies %v, Completed Sub-tasks %v; want 3 and 2", d, c)
	}
	h.call("PATCH", "/v1/pages/"+parent, `{"properties":{"Dependencies":{"rollup":{"type":"number","number":0}}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	h.call("PATCH", "/v1/pages/"+parent, `{"properties":{"Sub-tasks":{"relation":[{"id":"0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e"}]}}}`).wantError(t, http.StatusBadRequest, "validation_error")
	h.call("PATCH", "/v1/pages/"+kids[2], `{"properties":{"Parent-task":{"relation":[]}}}`).mustOK(t)
	got = h.call("GET", "/v1/pages/"+parent, "").mustOK(t).Body
	if d := prop(got, "Dependencies").(map[string]any)["number"]; d != 2.0 {
		t.Fatalf("after unlinking, Dependencies %v, want 2", d)
	}
}
