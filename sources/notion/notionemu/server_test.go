package notionemu

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The error codes and statuses below are the ones the status-code reference
// (developers.notion.com/reference/status-codes) lists: 400 invalid_json
// "The request body could not be decoded as JSON", 400 invalid_request_url,
// 400 validation_error, 400 missing_version "The request is missing the
// required Notion-Version header", 401 unauthorized "The bearer token is not
// valid", 404 object_not_found "Given the bearer token used, the resource
// does not exist … or has not been shared with owner of the bearer token".
func TestRequestsNotionRejects(t *testing.T) {
	h := newHarness(t)
	h.srv.AddToken("secret_other")
	private, err := h.srv.CreateDatabase(PresetClaimProtocol(), "secret_other")
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{"Authorization": "Bearer " + testToken, "Notion-Version": NotionVersion}
	without := func(key string) map[string]string {
		m := map[string]string{}
		for k, v := range good {
			if k != key {
				m[k] = v
			}
		}
		return m
	}
	with := func(key, value string) map[string]string {
		m := without(key)
		m[key] = value
		return m
	}
	query := "/v1/databases/" + h.db + "/query"
	tests := []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		code                     string
	}{
		{"no token", "GET", "/v1/databases/" + h.db, "", without("Authorization"), 401, "unauthorized"},
		{"unknown token", "GET", "/v1/databases/" + h.db, "", with("Authorization", "Bearer secret_nobody"), 401, "unauthorized"},
		{"basic instead of bearer", "GET", "/v1/databases/" + h.db, "", with("Authorization", "Basic "+testToken), 401, "unauthorized"},
		{"no version", "GET", "/v1/databases/" + h.db, "", without("Notion-Version"), 400, "missing_version"},
		{"unknown version", "GET", "/v1/databases/" + h.db, "", with("Notion-Version", "2024-01-01"), 400, "validation_error"},
		{"unknown database", "GET", "/v1/databases/0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e", "", good, 404, "object_not_found"},
		{"database not shared with the token", "GET", "/v1/databases/" + private, "", good, 404, "object_not_found"},
		{"query of a database not shared", "POST", "/v1/databases/" + private + "/query", "{}", good, 404, "object_not_found"},
		{"database id that is no uuid", "GET", "/v1/databases/not-a-uuid", "", good, 400, "validation_error"},
		{"unknown page", "GET", "/v1/pages/0c8fd3d46f9a4a7c9d430d7a3f3b1f2e", "", good, 404, "object_not_found"},
		{"unknown url", "GET", "/v1/blocks/x/children", "", good, 400, "invalid_request_url"},
		{"wrong method", "DELETE", "/v1/pages/0c8fd3d46f9a4a7c9d430d7a3f3b1f2e", "", good, 400, "invalid_request_url"},
		{"malformed json", "POST", query, `{"filter":`, good, 400, "invalid_json"},
		{"body that is no object", "POST", query, `[1,2]`, good, 400, "validation_error"},
		{"unknown body member", "POST", query, `{"filters":{}}`, good, 400, "validation_error"},
		{"page_size over 100", "POST", query, `{"page_size":101}`, good, 400, "validation_error"},
		{"page_size zero", "POST", query, `{"page_size":0}`, good, 400, "validation_error"},
		{"page_size fractional", "POST", query, `{"page_size":2.5}`, good, 400, "validation_error"},
		{"cursor of no page", "POST", query, `{"start_cursor":"0c8fd3d4-6f9a-4a7c-9d43-0d7a3f3b1f2e"}`, good, 400, "validation_error"},
		{"create without properties", "POST", "/v1/pages", `{"parent":{"database_id":"` + h.db + `"}}`, good, 400, "validation_error"},
		{"create under a page", "POST", "/v1/pages", `{"parent":{"page_id":"` + h.db + `"},"properties":{}}`, good, 400, "validation_error"},
		{"create in a database not shared", "POST", "/v1/pages", `{"parent":{"database_id":"` + private + `"},"properties":{}}`, good, 404, "object_not_found"},
		{"comments without block_id", "GET", "/v1/comments", "", good, 400, "validation_error"},
		{"body over 500 KB", "POST", query, `{"filter":"` + strings.Repeat("x", 500_001) + `"}`, good, 400, "validation_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.send(tt.method, tt.path, tt.body, tt.headers).wantError(t, tt.status, tt.code)
		})
	}
}

// A database object carries its schema: each property with id, name, type
// and type config, e.g. "Status": {"id": "%3EQQn", "name": "Status",
// "type": "select", "select": {"options": [{"id": …, "name": …, "color": …}]}}.
func TestDatabaseRetrieveShowsTheSchema(t *testing.T) {
	h := newHarness(t)
	db := h.call("GET", "/v1/databases/"+strings.ReplaceAll(h.db, "-", ""), "").mustOK(t).Body
	if db["object"] != "database" || db["id"] != h.db {
		t.Fatalf("object %v id %v, want database %s", db["object"], db["id"], h.db)
	}
	props := db["properties"].(map[string]any)
	if len(props) != len(PresetNtask().Properties) {
		t.Fatalf("%d properties, want %d", len(props), len(PresetNtask().Properties))
	}
	ids := map[string]bool{}
	for name, raw := range props {
		p := raw.(map[string]any)
		if p["name"] != name || p["id"] == "" || p[p["type"].(string)] == nil {
			t.Errorf("property %q = %v, want id, name, type and type config", name, p)
		}
		if ids[p["id"].(string)] {
			t.Errorf("property id %v used twice", p["id"])
		}
		ids[p["id"].(string)] = true
	}
	if props["Name"].(map[string]any)["id"] != "title" {
		t.Errorf("title property id %v, want \"title\"", props["Name"].(map[string]any)["id"])
	}
	var names []string
	for _, o := range props["Status"].(map[string]any)["select"].(map[string]any)["options"].([]any) {
		opt := o.(map[string]any)
		if opt["id"] == "" || opt["color"] == "" {
			t.Errorf("option %v lacks id or color", opt)
		}
		names = append(names, opt["name"].(string))
	}
	if got := strings.Join(names, ","); got != "READY,IN_PROGRESS,DONE,BLOCKED,REVIEW,CANCELED" {
		t.Errorf("Status options %s", got)
	}
	unique := props["ID"].(map[string]any)["unique_id"].(map[string]any)
	if unique["prefix"] != "TASK" {
		t.Errorf("unique_id config %v, want prefix TASK", unique)
	}
}

func TestCreateDatabaseRefusesBadSchemas(t *testing.T) {
	srv := New(Options{})
	srv.AddToken(testToken)
	tests := map[string]DatabaseSchema{
		"no title":        {Properties: []Property{{Name: "x", Type: TypeRichText}}},
		"two titles":      {Properties: []Property{{Name: "a", Type: TypeTitle}, {Name: "b", Type: TypeTitle}}},
		"duplicate name":  {Properties: []Property{{Name: "a", Type: TypeTitle}, {Name: "a", Type: TypeNumber}}},
		"comma option":    {Properties: []Property{{Name: "a", Type: TypeTitle}, {Name: "s", Type: TypeSelect, Options: []string{"a,b"}}}},
		"bad fixed id":    {ID: "nope", Properties: []Property{{Name: "a", Type: TypeTitle}}},
		"config on title": {Properties: []Property{{Name: "a", Type: TypeTitle, Config: []byte(`{}`)}}},
	}
	for name, schema := range tests {
		if _, err := srv.CreateDatabase(schema, testToken); err == nil {
			t.Errorf("%s: created", name)
		}
	}
	if _, err := srv.CreateDatabase(PresetHandoffQueue(), "secret_unknown"); err == nil {
		t.Error("shared with a token never added")
	}
	fixed := "2f835e81-2bbb-81b6-9700-e18108a40b1f"
	for _, schema := range []DatabaseSchema{PresetClaimProtocol(), PresetMeshHandoff(), PresetHandoffQueue(), PresetNtask()} {
		schema.ID = ""
		if _, err := srv.CreateDatabase(schema, testToken); err != nil {
			t.Errorf("preset %s: %v", schema.Title, err)
		}
	}
	schema := PresetClaimProtocol()
	schema.ID = strings.ReplaceAll(fixed, "-", "")
	if id, err := srv.CreateDatabase(schema, testToken); err != nil || id != fixed {
		t.Errorf("fixed id: %q %v, want %s", id, err, fixed)
	}
	if _, err := srv.CreateDatabase(schema, testToken); err == nil {
		t.Error("same fixed id twice")
	}
}

func TestServeUntilCanceled(t *testing.T) {
	srv := New(Options{})
	srv.AddToken(testToken)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/pages/0c8fd3d46f9a4a7c9d430d7a3f3b1f2e", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Notion-Version", NotionVersion)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}

func TestEveryAnswerCarriesTheEmulatorsTime(t *testing.T) {
	h := newHarness(t)
	h.clock.Advance(90 * time.Minute)
	for _, r := range []response{
		h.call("GET", "/v1/databases/"+h.db, ""),
		h.send("GET", "/v1/databases/"+h.db, "", nil), // refused: no token
	} {
		got, err := http.ParseTime(r.Header.Get("Date"))
		if err != nil || !got.Equal(h.clock.Now().Truncate(time.Second)) {
			t.Fatalf("Date %q (%v), want the emulator's clock %v", r.Header.Get("Date"), err, h.clock.Now())
		}
	}
}
