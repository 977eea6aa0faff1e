package notionemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The behaviours of Notion-Version 2026-12-01 the emulator serves, each
// beside what 2026-03-11 does with the same request
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01).

// todayHarness is an emulator holding a PresetToday data source (a status
// property with groups, and a people property), with four tasks.
func todayHarness(t testing.TB) (*harness, string) {
	t.Helper()
	h := newHarness(t)
	db, err := h.srv.CreateDatabase(PresetToday(), testToken)
	if err != nil {
		t.Fatal(err)
	}
	ds := h.srv.DataSources(db)[0]
	for _, c := range []struct{ name, status string }{{"a", "Backlog"}, {"b", "Ready"}, {"c", "In Progress"}, {"d", "Done"}} {
		body := `{"parent":{"data_source_id":"` + ds + `"},"properties":{"Task name":{"title":[{"text":{"content":"` + c.name +
			`"}}]},"Status":{"status":{"name":"` + c.status + `"}}}}`
		h.at(TrashVersion, "POST", "/v1/pages", body, nil).mustOK(t)
	}
	return h, ds
}

// at sends a request under version with extra headers.
func (h *harness) at(version, method, path, body string, extra map[string]string) response {
	h.t.Helper()
	headers := map[string]string{"Authorization": "Bearer " + testToken, "Notion-Version": version}
	for k, v := range extra {
		headers[k] = v
	}
	return h.send(method, path, body, headers)
}

// taskNames lists the "Task name" titles of a query's results, sorted.
func taskNames(list map[string]any) []string {
	var out []string
	for _, r := range list["results"].([]any) {
		for _, part := range prop(r.(map[string]any), "Task name").([]any) {
			out = append(out, part.(map[string]any)["plain_text"].(string))
		}
	}
	slices.Sort(out)
	return out
}

func TestAQueryWithoutFilterPropertiesAnswersTheTitleAloneFrom20261201(t *testing.T) {
	h, ds := todayHarness(t)
	statusID := h.at(TrashVersion, "GET", "/v1/data_sources/"+ds, "", nil).mustOK(t).Body["properties"].(map[string]any)["Status"].(map[string]any)["id"].(string)
	named := "?" + url.Values{"filter_properties": {"title", statusID}}.Encode()
	for _, c := range []struct {
		version, query string
		want           []string // property names of every page
	}{
		{TrashVersion, "", nil}, // nil: every property of the schema
		{TitleOnlyVersion, "", []string{"Task name"}},
		{TrashVersion, named, []string{"Status", "Task name"}},
		{TitleOnlyVersion, named, []string{"Status", "Task name"}},
	} {
		t.Run(c.version+c.query, func(t *testing.T) {
			list := h.at(c.version, "POST", "/v1/data_sources/"+ds+"/query"+c.query, `{}`, nil).mustOK(t).Body
			want := c.want
			if want == nil {
				want = []string{}
				for _, p := range PresetToday().Properties {
					want = append(want, p.Name)
				}
				slices.Sort(want)
			}
			for _, r := range list["results"].([]any) {
				page := r.(map[string]any)
				var got []string
				for name := range page["properties"].(map[string]any) {
					got = append(got, name)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("page properties %v, want %v", got, want)
				}
				// The page's other fields do not change.
				for _, k := range []string{"id", "url", "last_edited_time", "created_time", "parent"} {
					if page[k] == nil {
						t.Fatalf("page lacks %s: %v", k, page)
					}
				}
			}
		})
	}
}

func TestStatusFiltersOnGroupsByVersion(t *testing.T) {
	h, ds := todayHarness(t)
	beta := map[string]string{"Notion-Beta": StatusGroupBeta}
	for _, c := range []struct {
		name, version, filter string
		headers               map[string]string
		want                  []string // nil: refused with 400 validation_error
	}{
		{"an option name matches the option", TrashVersion, `{"equals":"Ready"}`, nil, []string{"b"}},
		{"an option name matches the option", TitleOnlyVersion, `{"equals":"Ready"}`, nil, []string{"b"}},
		// "To-do" names a group and no option.
		{"equals on a group name matches the group", TrashVersion, `{"equals":"To-do"}`, nil, []string{"a", "b"}},
		{"equals stops matching groups", TitleOnlyVersion, `{"equals":"To-do"}`, nil, []string{}},
		{"does_not_equal on a group name leaves the group out", TrashVersion, `{"does_not_equal":"Complete"}`, nil, []string{"a", "b", "c"}},
		{"does_not_equal on a group name matches every page", TitleOnlyVersion, `{"does_not_equal":"Complete"}`, nil, []string{"a", "b", "c", "d"}},
		{"the group operator needs the beta header", TrashVersion, `{"group":{"equals":"To-do"}}`, nil, nil},
		{"the group operator with the beta header", TrashVersion, `{"group":{"equals":"To-do"}}`, beta, []string{"a", "b"}},
		{"the group operator", TitleOnlyVersion, `{"group":{"equals":"To-do"}}`, nil, []string{"a", "b"}},
		{"the group operator's does_not_equal", TitleOnlyVersion, `{"group":{"does_not_equal":"Complete"}}`, nil, []string{"a", "b", "c"}},
		{"the group operator takes equals or does_not_equal", TitleOnlyVersion, `{"group":{"contains":"To-do"}}`, nil, nil},
	} {
		t.Run(c.version+"/"+c.name, func(t *testing.T) {
			body := `{"filter":{"property":"Status","status":` + c.filter + `}}`
			res := h.at(c.version, "POST", "/v1/data_sources/"+ds+"/query?filter_properties=title", body, c.headers)
			if c.want == nil {
				res.wantError(t, http.StatusBadRequest, "validation_error")
				return
			}
			if got := taskNames(res.mustOK(t).Body); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Fatalf("matched %v, want %v", got, c.want)
			}
		})
	}
}

func TestAPersonWithoutANameIsNullFrom20261201(t *testing.T) {
	h, ds := todayHarness(t)
	named, unnamed := newID(), newID()
	for id, name := range map[string]string{named: "Ada", unnamed: ""} {
		if err := h.srv.AddUser(id, name); err != nil {
			t.Fatal(err)
		}
	}
	body := `{"parent":{"data_source_id":"` + ds + `"},"properties":{"Task name":{"title":[{"text":{"content":"e"}}]},"Assignee":{"people":[{"id":"` +
		named + `"},{"id":"` + unnamed + `"}]}}}`
	id := h.at(TrashVersion, "POST", "/v1/pages", body, nil).mustOK(t).Body["id"].(string)
	for _, c := range []struct {
		version string
		want    []any
	}{
		{TrashVersion, []any{"Ada", ""}},
		{TitleOnlyVersion, []any{"Ada", nil}},
	} {
		people := prop(h.at(c.version, "GET", "/v1/pages/"+id, "", nil).mustOK(t).Body, "Assignee").([]any)
		var got []any
		for _, p := range people {
			name, ok := p.(map[string]any)["name"]
			if !ok {
				t.Fatalf("%s: a workspace member without a name has no name field: %v", c.version, p)
			}
			got = append(got, name)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || (c.want[1] == nil) != (got[1] == nil) {
			t.Fatalf("%s: names %#v, want %#v", c.version, got, c.want)
		}
	}
}

func TestAVersionNotionDoesNotServeIsRefused(t *testing.T) {
	h := newHarness(t)
	res := h.at("2027-01-01", "GET", "/v1/databases/"+h.db, "", nil)
	res.wantError(t, http.StatusBadRequest, "validation_error")
	if msg := res.Body["message"].(string); !strings.Contains(msg, TitleOnlyVersion) {
		t.Fatalf("the refusal does not name the versions served: %s", msg)
	}
}

// Stats counts the bytes of every body the emulator served, errors too,
// so that a client's payload can be measured on the server's side.
func TestStatsCountTheBytesServed(t *testing.T) {
	h, ds := todayHarness(t)
	ts := httptest.NewServer(h.srv)
	defer ts.Close()
	h.srv.ResetStats()
	var read int64
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/data_sources/" + ds + "/query", `{}`},
		{"POST", "/v1/data_sources/" + ds + "/query?filter_properties=title", `{}`},
		{"GET", "/v1/pages/not-a-page", ""},
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Notion-Version", TrashVersion)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		read += int64(len(raw))
	}
	st := h.srv.Stats()
	if st.Bytes != read {
		t.Fatalf("Stats.Bytes = %d, the client read %d", st.Bytes, read)
	}
	if q, p := st.BytesByEndpoint[EndpointDataSourceQuery], st.BytesByEndpoint[EndpointPageRetrieve]; q+p != read || q == 0 || p == 0 {
		t.Fatalf("by endpoint: query %d + page %d, want %d in all", q, p, read)
	}
	h.srv.ResetStats()
	if st := h.srv.Stats(); st.Bytes != 0 || len(st.BytesByEndpoint) != 0 {
		t.Fatalf("ResetStats left %d bytes", st.Bytes)
	}
}
