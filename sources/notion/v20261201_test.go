package notion

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// Notion API 2026-12-01
// (https://developers.notion.com/guides/get-started/upgrade-guide-2026-12-01).

// testVersion is the Notion-Version every source the tests open speaks
// (emulator.config).
var testVersion = VersionCurrent

// testVersionEnv runs the tests under one version only.
const testVersionEnv = "CLAIMDECK_NOTION_TEST_VERSION"

// TestMain runs every test of the package under each Notion-Version a
// workspace may be configured with today: the default, then 2026-12-01,
// against the emulator serving that version's behaviour. Benchmarks and
// fuzzing run once, under the default.
func TestMain(m *testing.M) {
	flag.Parse()
	versions := []string{VersionCurrent, VersionTitleOnly}
	if v := os.Getenv(testVersionEnv); v != "" {
		versions = []string{v}
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		versions = versions[:1]
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		versions = versions[:1]
	}
	for _, v := range versions {
		testVersion = v
		if len(versions) > 1 {
			fmt.Fprintf(os.Stderr, "sources/notion: the tests under Notion-Version %s\n", v)
		}
		if code := m.Run(); code != 0 {
			fmt.Fprintf(os.Stderr, "sources/notion: failed under Notion-Version %s\n", v)
			os.Exit(code)
		}
	}
	os.Exit(0)
}

// queries records the query string of every data source query sent.
type queries struct {
	next http.RoundTripper
	mu   sync.Mutex
	sent []string // "filter_properties=…&…", one per query
}

func (q *queries) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/query") {
		q.mu.Lock()
		q.sent = append(q.sent, req.URL.RawQuery)
		q.mu.Unlock()
	}
	return q.next.RoundTrip(req)
}

// Every query names, as filter_properties, exactly the properties the
// source reads: the roles the mapping binds, no more. Under 2026-12-01 a
// query without them answers the title alone.
func TestEveryQueryNamesThePropertiesTheSourceReads(t *testing.T) {
	emu := newEmulator(t)
	rec := &queries{next: emu.rt}
	cfg := emu.config(emu.database(t, withExtras(presetSchema(PresetNtask), PresetNtask)), PresetNtask)
	cfg.Transport = rec
	src := emu.open(t, cfg)
	ctx := context.Background()
	created, err := src.Create(ctx, sources.NewTask{Title: "one", Description: "with a description"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ClaimNext(ctx, sources.ClaimRequest{Agent: "agent-1", RunID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Poll(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Archive(ctx, sources.ArchiveQuery{Before: time.Now(), Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if err := src.CheckWrite(ctx); err != nil {
		t.Fatal(err)
	}
	// The properties by id, from the data source's schema.
	sc, err := src.api.schema(ctx, src.ds)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for name, id := range sc.ids {
		ids[id] = name
	}
	// Seed 002's properties, each a role the mapping reads, and the two
	// extras the test database adds (Description, Create Key).
	read := []string{"Agent", "Agent Run", "Artifacts", "BlockerReason", "Claimed By", "Class", "Create Key", "Dependencies", "Description",
		"DoneAt", "ID", "Lock Expires", "Lock Token", "Name", "NextCheckAt", "Priority", "StartedAt", "Status", "UnblockAction"}
	if got := names(t, ids, src.api.props); !slices.Equal(got, read) {
		t.Fatalf("the source reads %v, want %v", got, read)
	}
	if len(rec.sent) < 4 {
		t.Fatalf("%d queries recorded", len(rec.sent))
	}
	for _, raw := range rec.sent {
		q, err := urlQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		got := names(t, ids, q)
		if !slices.Equal(got, read) && !slices.Equal(got, []string{"Name"}) {
			t.Fatalf("a query named %v (%q): want the properties the source reads, or the title alone where it reads nothing else", got, raw)
		}
	}
	if got, err := src.Get(ctx, created.ID); err != nil || got.Description != "with a description" {
		t.Fatalf("the task read back: %+v %v", got, err)
	}
}

func urlQuery(raw string) ([]string, error) {
	v, err := url.ParseQuery(raw)
	return v["filter_properties"], err
}

// names turns property ids into sorted property names; an id the schema
// lacks fails the test.
func names(t *testing.T, byID map[string]string, ids []string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		name, ok := byID[id]
		if !ok {
			t.Fatalf("filter_properties names %q, which is no property of the data source", id)
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// A holder whose Notion user has no name (null from 2026-12-01) is shown
// by the user's id: the claim still names someone and keeps its run.
func TestAHolderWithoutANameIsShownByTheirUserID(t *testing.T) {
	emu, db, cfg := skillDB(t)
	if err := emu.srv.AddUser(agentUser, ""); err != nil {
		t.Fatal(err)
	}
	src := emu.open(t, cfg)
	expires := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	id := skillPage(t, emu, db, title("held"), status("In Progress"),
		`"Agent Run":{"rich_text":[{"text":{"content":"run-7"}}]}`,
		`"Lock Token":{"rich_text":[{"text":{"content":"tok-7"}}]}`,
		`"Lock Expires":{"date":{"start":"`+expires+`"}}`,
		`"Assignee":{"people":[{"id":"`+agentUser+`"}]}`)
	task, err := src.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if c := task.Claim(); c.Name != agentUser || c.RunID != "run-7" || c.Holder != model.HolderAgent {
		t.Fatalf("claim %+v: want the holder named by their user id %s, run run-7", c, agentUser)
	}
}

// A status word that names a status group and no option worked under
// 2026-03-11 only in a filter, where equals matched the group; 2026-12-01
// matches nothing with it, and a page never shows it. Open refuses it.
func TestAStatusWordNamingAGroupIsRefused(t *testing.T) {
	emu := newEmulator(t)
	schema := presetSchema(PresetNtask)
	for i, p := range schema.Properties {
		if p.Name == "Status" {
			schema.Properties[i].Type = notionemu.TypeStatus
			schema.Properties[i].Groups = []notionemu.StatusGroup{
				{Name: "To-do", Options: []string{"READY", "BLOCKED"}},
				{Name: "In progress", Options: []string{"IN_PROGRESS", "REVIEW"}},
				{Name: "Complete", Options: []string{"DONE", "CANCELED"}},
			}
		}
	}
	cfg := emu.config(emu.database(t, schema), PresetNtask)
	emu.open(t, cfg) // the vocabulary's words are options: it opens
	for _, words := range []map[string]string{{"done": "Complete"}, {"queued": "to-do"}} {
		m, err := Custom{Statuses: words}.Build()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Mapping = &m
		_, err = Open(context.Background(), cfg)
		if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(fmt.Sprint(err), "names a status group of property \"Status\", not an option") {
			t.Fatalf("statuses %v: Open = %v, want MISCONFIGURED naming the group word", words, err)
		}
	}
}

func TestTheAPIVersionIsConfiguredPerSource(t *testing.T) {
	emu := newEmulator(t)
	db := emu.database(t, presetSchema(PresetNtask))
	for _, c := range []struct{ set, want string }{{"", VersionCurrent}, {VersionTitleOnly, VersionTitleOnly}, {" " + VersionCurrent, VersionCurrent}, {VersionDataSources, VersionDataSources}} {
		cfg := emu.config(db, PresetNtask)
		cfg.Version = c.set
		if got := emu.open(t, cfg).APIVersion(); got != c.want {
			t.Fatalf("api_version %q speaks %s, want %s", c.set, got, c.want)
		}
	}
	cfg := emu.config(db, PresetNtask)
	cfg.Version = "2027-01-01"
	_, err := Open(context.Background(), cfg)
	if model.CodeOf(err) != model.CodeMisconfigured || !strings.Contains(err.Error(), `api_version "2027-01-01"`) ||
		!strings.Contains(err.Error(), VersionCurrent) || !strings.Contains(err.Error(), VersionTitleOnly) {
		t.Fatalf("an unknown version: %v; want MISCONFIGURED naming the key and the versions", err)
	}
}

// The doctor's line: the version spoken, and whether the workspace
// answers 2026-12-01 — here an emulator that refuses it, as a Notion
// that predates the version would.
func TestTheDoctorSaysWhichVersionIsSpokenAndWhetherTheNextAnswers(t *testing.T) {
	emu := newEmulator(t)
	db := emu.database(t, presetSchema(PresetNtask))
	cfg := emu.config(db, PresetNtask)
	cfg.Version = VersionCurrent
	detail, err := emu.open(t, cfg).DoctorVersion(context.Background())
	if err != nil || !strings.Contains(detail, "speaks Notion API "+VersionCurrent) || !strings.Contains(detail, "also answers "+VersionTitleOnly) {
		t.Fatalf("doctor: %q %v", detail, err)
	}

	before := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Notion-Version") == VersionTitleOnly {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"object":"error","status":400,"code":"validation_error","message":"Notion-Version 2026-12-01 is not a valid version.","request_id":"r-1"}`)
			return
		}
		emu.srv.ServeHTTP(w, r)
	}))
	defer before.Close()
	cfg.BaseURL = before.URL
	src := emu.open(t, cfg)
	detail, err = src.DoctorVersion(context.Background())
	if err != nil || !strings.Contains(detail, "does not answer "+VersionTitleOnly) || !strings.Contains(detail, "validation_error") {
		t.Fatalf("doctor before 2026-12-01: %q %v", detail, err)
	}
	cfg.Version = VersionTitleOnly
	if _, err := Open(context.Background(), cfg); err == nil {
		t.Fatal("a source speaking 2026-12-01 opened on a Notion that refuses it")
	}
}

// Under 2026-12-01 a list without filter_properties would carry titles
// alone, and every task would read as empty: the package's tests run under
// both versions (TestMain), and this one says why directly.
func TestUnder20261201AListWithoutFilterPropertiesLosesTheTasks(t *testing.T) {
	emu := newEmulator(t)
	cfg := emu.config(emu.database(t, presetSchema(PresetNtask)), PresetNtask)
	cfg.Version = VersionTitleOnly
	src := emu.open(t, cfg)
	ctx := context.Background()
	if _, err := src.Create(ctx, sources.NewTask{Title: "queued"}); err != nil {
		t.Fatal(err)
	}
	read := func() model.State {
		d, err := src.Poll(ctx, "")
		if err != nil || len(d.Tasks) != 1 {
			t.Fatalf("poll: %v, %d tasks", err, len(d.Tasks))
		}
		return d.Tasks[0].State
	}
	if st := read(); st != model.StateQueued {
		t.Fatalf("with filter_properties the task reads %s", st)
	}
	src.api.props = nil
	if st := read(); st == model.StateQueued {
		t.Fatalf("without filter_properties the task still reads %s: the emulator does not serve 2026-12-01's lists", st)
	}
	_ = notionemu.TitleOnlyVersion
}
