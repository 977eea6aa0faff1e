package notionspec

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	dataSource = "248104cd-477e-80af-bc30-000bd28de8f9"
	pageID     = "59833787-2cf9-4fdf-8782-e53db20768a5"
)

func request(t testing.TB, method, path, version, body string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://127.0.0.1:1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer secret_never_shown")
	if version != "" {
		req.Header.Set("Notion-Version", version)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func load(t testing.TB) *Spec {
	t.Helper()
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTheDescriptionIsOfVersion20250903(t *testing.T) {
	s := load(t)
	if s.Version != "2025-09-03" {
		t.Fatalf("Version = %q, want the description's 2025-09-03", s.Version)
	}
	if len(s.Corrections) == 0 {
		t.Fatal("no corrections loaded from testdata/corrections.json")
	}
}

// The requests claimdeck's Notion source makes, in the shapes Notion's
// reference gives them, are inside the (corrected) description.
func TestRequestsNotionDocumentsAreAccepted(t *testing.T) {
	s := load(t)
	for _, c := range []struct{ name, method, path, body string }{
		{"database retrieve", "GET", "/v1/databases/" + dataSource, ""},
		{"data source retrieve", "GET", "/v1/data_sources/" + dataSource, ""},
		{"data source query with filter and cursor", "POST", "/v1/data_sources/" + dataSource + "/query",
			`{"page_size":100,"start_cursor":"abc","filter":{"property":"Status","status":{"equals":"Ready"}},"sorts":[{"property":"Priority","direction":"ascending"}]}`},
		{"data source query sorted by a timestamp", "POST", "/v1/data_sources/" + dataSource + "/query",
			`{"page_size":100,"sorts":[{"timestamp":"last_edited_time","direction":"descending"}]}`},
		{"data source query naming properties", "POST", "/v1/data_sources/" + dataSource + "/query?filter_properties=title&filter_properties=abc", `{"page_size":100}`},
		{"page retrieve", "GET", "/v1/pages/" + pageID, ""},
		{"page update", "PATCH", "/v1/pages/" + pageID, `{"properties":{"Status":{"status":{"name":"In Progress"}}}}`},
		{"page create in a data source", "POST", "/v1/pages",
			`{"parent":{"type":"data_source_id","data_source_id":"` + dataSource + `"},"properties":{"Name":{"title":[{"text":{"content":"x"}}]}}}`},
		{"comment list", "GET", "/v1/comments?block_id=" + pageID + "&page_size=100", ""},
		{"comment create", "POST", "/v1/comments", `{"parent":{"page_id":"` + pageID + `"},"rich_text":[{"text":{"content":"done"}}]}`},
		{"comment create naming the rich text's type", "POST", "/v1/comments", `{"parent":{"page_id":"` + pageID + `"},"rich_text":[{"type":"text","text":{"content":"done"}}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"2025-09-03", "2026-03-11", "2026-12-01"} {
				if err := s.Check(request(t, c.method, c.path, v, c.body)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A request outside the description is refused, and the refusal names
// what to fix without echoing the token.
func TestRequestsOutsideTheDescriptionAreRefused(t *testing.T) {
	s := load(t)
	for _, c := range []struct{ name, method, path, version, body, want string }{
		{"the pre-2025 database query", "POST", "/v1/databases/" + dataSource + "/query", "2025-09-03", `{"page_size":100}`, "POST /v1/databases/"},
		{"an old Notion-Version", "GET", "/v1/pages/" + pageID, "2022-06-28", "", `Notion-Version is "2022-06-28"`},
		{"no Notion-Version", "GET", "/v1/pages/" + pageID, "", "", `Notion-Version is ""`},
		{"a method the path lacks", "DELETE", "/v1/pages/" + pageID, "2025-09-03", "", "DELETE"},
		{"a page created under a database_id parent", "POST", "/v1/pages", "2025-09-03",
			`{"parent":{"database_id":"` + dataSource + `"},"properties":{}}`, "parent"},
		{"a page create without properties", "POST", "/v1/pages", "2025-09-03",
			`{"parent":{"type":"data_source_id","data_source_id":"` + dataSource + `"}}`, "properties"},
		{"a field the update does not have", "PATCH", "/v1/pages/" + pageID, "2025-09-03", `{"properties":{},"lock":"mine"}`, "lock"},
		{"a page_size that is not a number", "POST", "/v1/data_sources/" + dataSource + "/query", "2025-09-03", `{"page_size":"100"}`, "page_size"},
		{"a sort by a timestamp Notion does not sort by", "POST", "/v1/data_sources/" + dataSource + "/query", "2025-09-03",
			`{"sorts":[{"timestamp":"claimed_at","direction":"ascending"}]}`, "sorts"},
		{"a sort naming both a property and a timestamp", "POST", "/v1/data_sources/" + dataSource + "/query", "2025-09-03",
			`{"sorts":[{"property":"Priority","timestamp":"last_edited_time","direction":"ascending"}]}`, "sorts"},
		{"a comment whose rich text is a mention", "POST", "/v1/comments", "2025-09-03",
			`{"parent":{"page_id":"` + pageID + `"},"rich_text":[{"type":"mention","text":{"content":"x"}}]}`, "type"},
		{"a comment without rich_text", "POST", "/v1/comments", "2025-09-03", `{"parent":{"page_id":"` + pageID + `"}}`, "rich_text"},
		{"a body that is not JSON", "PATCH", "/v1/pages/" + pageID, "2025-09-03", `{"properties":`, "PATCH /v1/pages/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.Check(request(t, c.method, c.path, c.version, c.body))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("the refusal does not name %q: %v", c.want, err)
			}
			if strings.Contains(err.Error(), "secret_never_shown") {
				t.Errorf("the refusal shows the token: %v", err)
			}
		})
	}
}

// The description as published refuses the page create Notion's reference
// documents; the correction is what lets it through.
func TestTheParentCorrectionIsNeeded(t *testing.T) {
	raw, err := New(description, nil)
	if err != nil {
		t.Fatal(err)
	}
	create := `{"parent":{"type":"data_source_id","data_source_id":"` + dataSource + `"},"properties":{}}`
	if err := raw.Check(request(t, "POST", "/v1/pages", raw.Version, create)); err == nil {
		t.Fatal("the uncorrected description accepts a data_source_id parent: drop the correction")
	}
	if err := load(t).Check(request(t, "POST", "/v1/pages", raw.Version, create)); err != nil {
		t.Fatalf("the corrected description refuses the documented page create: %v", err)
	}
}

// Each correction is needed: without it, the request Notion's reference
// documents is refused.
func TestEveryCorrectionIsNeeded(t *testing.T) {
	all, err := ParseCorrections(corrections)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]*http.Request{
		"/components/schemas/dataSourceIdParentRequest": request(t, "POST", "/v1/pages", "2025-09-03",
			`{"parent":{"type":"data_source_id","data_source_id":"`+dataSource+`"},"properties":{}}`),
		"/components/schemas/sortObject": request(t, "POST", "/v1/data_sources/"+dataSource+"/query", "2025-09-03",
			`{"sorts":[{"timestamp":"last_edited_time","direction":"ascending"}]}`),
		"/paths/~1v1~1comments/post/parameters": request(t, "POST", "/v1/comments", "2025-09-03",
			`{"parent":{"page_id":"`+pageID+`"},"rich_text":[{"text":{"content":"x"}}]}`),
		"/paths/~1v1~1comments/post/requestBody/content/application~1json/schema/properties/rich_text/items/properties": request(t, "POST", "/v1/comments", "2025-09-03",
			`{"parent":{"page_id":"`+pageID+`"},"rich_text":[{"type":"text","text":{"content":"x"}}]}`),
		"/components/parameters/notionVersion/schema/enum": request(t, "GET", "/v1/pages/"+pageID, "2026-03-11", ""),
	}
	for i, c := range all {
		req := documented[c.Pointer]
		if req == nil {
			t.Errorf("correction %s has no documented request in this test", c.Pointer)
			continue
		}
		without := append(append([]Correction{}, all[:i]...), all[i+1:]...)
		s, err := New(description, without)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(req); err == nil {
			t.Errorf("without the correction of %s the documented request is still accepted: drop the correction", c.Pointer)
		}
	}
}

func TestCorrectionsFileIsChecked(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"not JSON", `{`, "not a corrections file"},
		{"an unknown field", `{"corrections":[],"extra":1}`, "extra"},
		{"no reference", `{"corrections":[{"pointer":"/a","description_says":"x","reference_says":"y","value":{}}]}`, "references"},
		{"a reference that is not https", `{"corrections":[{"pointer":"/a","description_says":"x","reference_says":"y","references":["notion"],"value":{}}]}`, "references"},
		{"no value", `{"corrections":[{"pointer":"/a","description_says":"x","reference_says":"y","references":["https://developers.notion.com/"]}]}`, "value"},
		{"a relative pointer", `{"corrections":[{"pointer":"a","description_says":"x","reference_says":"y","references":["https://developers.notion.com/"],"value":{}}]}`, "pointer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCorrections([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
		})
	}
	stale := []Correction{{Pointer: "/components/schemas/noSuchSchema", Value: json.RawMessage(`{}`)}}
	if _, err := New(description, stale); err == nil || !strings.Contains(err.Error(), "nothing at") {
		t.Fatalf("a correction of a part the description lacks: err = %v", err)
	}
}

// The emulator-side check answers Notion's 400 and does not serve the
// request; the client-side one does not send it.
func TestRefusedRequestsGoNowhere(t *testing.T) {
	s := load(t)
	served := 0
	var heard []error
	h := s.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }), func(err error) { heard = append(heard, err) })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, request(t, "POST", "/v1/databases/"+dataSource+"/query", s.Version, `{}`))
	if rec.Code != http.StatusBadRequest || served != 0 || len(heard) != 1 || !strings.Contains(rec.Body.String(), "validation_error") {
		t.Fatalf("status %d, served %d, heard %v, body %s", rec.Code, served, heard, rec.Body)
	}
	sent := 0
	rt := s.Transport(roundTripper(func(*http.Request) (*http.Response, error) { sent++; return nil, nil }), func(err error) { heard = append(heard, err) })
	if _, err := rt.RoundTrip(request(t, "GET", "/v1/users/me/secret", s.Version, "")); err == nil || sent != 0 || len(heard) != 2 {
		t.Fatalf("err %v, sent %d, heard %d", err, sent, len(heard))
	}
}

// Check puts the body back: the request can still be sent.
func TestCheckKeepsTheBody(t *testing.T) {
	s := load(t)
	body := `{"properties":{}}`
	req := request(t, "PATCH", "/v1/pages/"+pageID, s.Version, body)
	if err := s.Check(req); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(req.Body)
	if string(got) != body {
		t.Fatalf("body after Check = %q, want %q", got, body)
	}
}

func FuzzParseCorrections(f *testing.F) {
	f.Add(string(corrections))
	f.Add(`{"corrections":[]}`)
	f.Add(`{"corrections":[{"pointer":"/","value":1}]}`)
	f.Fuzz(func(t *testing.T, file string) {
		cs, err := ParseCorrections([]byte(file))
		if err != nil {
			return
		}
		for _, c := range cs {
			if !strings.HasPrefix(c.Pointer, "/") || len(c.References) == 0 || len(c.Value) == 0 {
				t.Fatalf("accepted an incomplete correction: %+v", c)
			}
		}
	})
}

// Whatever the body, Check answers (never panics) and gives the body back.
func FuzzCheck(f *testing.F) {
	s := load(f)
	f.Add("POST", "/v1/pages", `{"parent":{"type":"data_source_id","data_source_id":"`+dataSource+`"},"properties":{}}`)
	f.Add("PATCH", "/v1/pages/"+pageID, `{"properties":{"a":null}}`)
	f.Add("POST", "/v1/data_sources/x/query?filter_properties=%zz", `[]`)
	f.Fuzz(func(t *testing.T, method, path, body string) {
		req, err := http.NewRequest(method, "http://127.0.0.1:1"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Notion-Version", s.Version)
		req.Header.Set("Content-Type", "application/json")
		_ = s.Check(req)
		got, _ := io.ReadAll(req.Body)
		if string(got) != body {
			t.Fatalf("body changed: %q", got)
		}
	})
}
