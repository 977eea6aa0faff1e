package notion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

// history is a database that has run for a while: many pages finished two
// days ago, a few live ones, and a few finished within the last day.
type history struct {
	emu   *emulator
	db    string
	src   *Source
	reads *reads
	// status writes a status value in the property's own type.
	status func(name string) string
	old    []string // ids of the pages finished two days ago
	live   []string // ids of the pages a 24-hour window keeps
}

// newHistory seeds finished pages two days back on Notion's clock, a
// minute apart in groups of 50, then the live and recent ones now. With
// statusType the Status property is a Notion status, not a select.
func newHistory(t *testing.T, finished int, statusType bool) *history {
	t.Helper()
	emu := newEmulator(t)
	schema := withExtras(presetSchema(PresetNtask), PresetNtask)
	status := func(name string) string { return `{"select":{"name":"` + name + `"}}` }
	if statusType {
		for i, p := range schema.Properties {
			if p.Name == "Status" {
				schema.Properties[i].Type = notionemu.TypeStatus
				schema.Properties[i].Options = []string{"READY", "IN_PROGRESS", "DONE", "BLOCKED", "REVIEW", "CANCELED", "FAILED"}
			}
		}
		status = func(name string) string { return `{"status":{"name":"` + name + `"}}` }
	}
	h := &history{emu: emu, db: emu.database(t, schema), status: status}
	page := func(title, state string) string {
		props := `"Name":{"title":[{"text":{"content":"` + title + `"}}]}`
		if state != "" {
			props += `,"Status":` + status(state)
		}
		return emu.raw(t, "POST", "/v1/pages", `{"parent":{"database_id":"`+h.db+`"},"properties":{`+props+`}}`)["id"].(string)
	}
	finals := []string{"DONE", "DONE", "DONE", "CANCELED", "FAILED"}
	emu.advance(-48 * time.Hour)
	for i := range finished {
		if i > 0 && i%50 == 0 {
			emu.advance(time.Minute)
		}
		h.old = append(h.old, page(fmt.Sprintf("shipped release %04d", i), finals[i%len(finals)]))
	}
	// Live work the window keeps however old its last edit.
	h.live = append(h.live, page("rotate the staging keys", "READY"), page("wait for the vendor", "BLOCKED"), page("check the migration", "REVIEW"))
	if !statusType {
		h.live = append(h.live, page("a page nobody gave a status", "")) // a select can be empty
	}
	emu.skew.Store(0)
	h.live = append(h.live, page("shipped yesterday evening", "DONE"), page("given up this morning", "CANCELED"), page("next up", "READY"))

	h.reads = &reads{next: emu.rt}
	cfg := emu.config(h.db, PresetNtask)
	cfg.Transport = h.reads
	h.src = emu.open(t, cfg)
	h.reads.reset()
	return h
}

// ids lists the tasks' ids in their order.
func ids(tasks []*model.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

// holds reports whether the tasks are exactly the pages named.
func holds(tasks []*model.Task, pages []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(ids(tasks))), slices.Sorted(slices.Values(pages)))
}

// A database with a year of done pages costs a full poll what its live
// work costs: Notion is asked for live and recently finished pages only,
// and history is counted only when the poll asks for the count.
func TestAFullPollReadsLiveWorkNotHistory(t *testing.T) {
	for _, statusType := range []bool{false, true} {
		t.Run(map[bool]string{false: "select", true: "status"}[statusType], func(t *testing.T) {
			ctx := context.Background()
			h := newHistory(t, 450, statusType)
			window := sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)}

			uncounted := window
			uncounted.Uncounted = true
			d, err := h.src.Poll(ctx, "", uncounted)
			if err != nil {
				t.Fatal(err)
			}
			queries, pages := h.reads.reset()
			if !d.Full || !holds(d.Tasks, h.live) {
				t.Fatalf("the windowed full poll holds %d tasks, want the %d live ones", len(d.Tasks), len(h.live))
			}
			if queries != 1 || pages != len(h.live) {
				t.Fatalf("the uncounted full poll read %d pages in %d queries, want the %d live pages in 1", pages, queries, len(h.live))
			}

			d, err = h.src.Poll(ctx, "", window)
			if err != nil {
				t.Fatal(err)
			}
			queries, pages = h.reads.reset()
			if !holds(d.Tasks, h.live) || d.Archived != len(h.old) {
				t.Fatalf("the counted full poll holds %d tasks and counts %d finished earlier, want %d and %d", len(d.Tasks), d.Archived, len(h.live), len(h.old))
			}
			// 1 for the live pages, ⌈450/100⌉ to count the history.
			if queries != 1+5 {
				t.Fatalf("the counted full poll sent %d queries, want 6", queries)
			}
			t.Logf("counted full poll: %d queries, %d pages in the answers", queries, pages)

			d, err = h.src.Poll(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Tasks) != len(h.old)+len(h.live) || d.Archived != 0 || h.reads.lastFilter() != nil {
				t.Fatalf("without a window: %d tasks, %d archived, filter %s; want every page and no filter", len(d.Tasks), d.Archived, h.reads.lastFilter())
			}
		})
	}
}

// The filter is Notion's compound filter: none of the final statuses (one
// multi-value condition, notion-sdk-js PR #707), an empty status or a
// recent edit, keyed by the property's own type.
func TestTheWindowFilterIsNotionsCompoundFilter(t *testing.T) {
	horizon := time.Date(2026, 11, 20, 9, 30, 41, 0, time.UTC)
	for _, c := range []struct{ typ, key string }{{"select", "select"}, {"status", "status"}} {
		t.Run(c.typ, func(t *testing.T) {
			h := newHistory(t, 0, c.typ == "status")
			if _, err := h.src.Poll(context.Background(), "", sources.PollOption{FinishedAfter: horizon, Uncounted: true}); err != nil {
				t.Fatal(err)
			}
			want := `{"or":[{"property":"Status","` + c.key + `":{"does_not_equal":["CANCELED","DONE","FAILED"]}},` +
				`{"property":"Status","` + c.key + `":{"is_empty":true}},` +
				`{"timestamp":"last_edited_time","last_edited_time":{"on_or_after":"2026-11-20T09:30:00Z"}}]}`
			var got, wanted any
			if err := json.Unmarshal(h.reads.lastFilter(), &got); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal([]byte(want), &wanted)
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(wanted)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Fatalf("the full poll sent\n%s\nwant\n%s", gotJSON, wantJSON)
			}
		})
	}
}

// Archive asks Notion for the history a query names and gives what the
// old client-side filter of the whole database gave.
func TestArchiveGivesWhatFilteringEverythingGave(t *testing.T) {
	ctx := context.Background()
	h := newHistory(t, 450, false)
	all, err := h.src.query(ctx, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.reads.reset()
	before := time.Now().Add(-24 * time.Hour)
	for _, c := range []struct {
		what     string
		q        sources.ArchiveQuery
		maxReads int // pages Notion may send
	}{
		{"every final state", sources.ArchiveQuery{Before: before}, len(h.old)},
		{"failed only", sources.ArchiveQuery{Before: before, State: model.StateFailed}, len(h.old) / 5},
		{"text in another case", sources.ArchiveQuery{Before: before, Text: "RELEASE 012"}, 10},
		{"text that could be part of an id", sources.ArchiveQuery{Before: before, Text: "0042"}, len(h.old)},
		{"the newest ten, ties at their minute included", sources.ArchiveQuery{Before: before, Limit: 10}, 100},
		{"the newest 20 canceled", sources.ArchiveQuery{Before: before, State: model.StateCanceled, Limit: 20}, 90},
		{"a horizon before every finish", sources.ArchiveQuery{Before: before.Add(-48 * time.Hour)}, 0},
		{"a horizon after every finish", sources.ArchiveQuery{Before: time.Now().Add(time.Hour)}, len(h.old) + 2},
	} {
		t.Run(c.what, func(t *testing.T) {
			want, err := sources.ArchiveOf(all, c.q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := h.src.Archive(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			_, pages := h.reads.reset()
			if !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("Archive gave %d tasks, filtering everything gives %d (or another order)", len(got), len(want))
			}
			if pages > c.maxReads {
				t.Fatalf("Archive read %d pages for %d results, want at most %d", pages, len(got), c.maxReads)
			}
		})
	}
}

// A page that leaves history by being edited comes back through the
// incremental poll; a page that ages into history leaves the next full
// poll and is counted instead.
func TestPagesMoveBetweenHistoryAndLiveWork(t *testing.T) {
	ctx := context.Background()
	h := newHistory(t, 120, false)
	window := sources.PollOption{FinishedAfter: time.Now().Add(-24 * time.Hour)}
	d, err := h.src.Poll(ctx, "", window)
	if err != nil {
		t.Fatal(err)
	}
	title := "reopened for the audit"
	reopened, err := h.src.Update(ctx, h.old[7], sources.Edit{Actor: "auditor", Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	inc, err := h.src.Poll(ctx, d.Cursor, window)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Full || !slices.Contains(ids(inc.Tasks), reopened.ID) {
		t.Fatalf("the incremental poll after an edit of a finished page holds %v, want %s", ids(inc.Tasks), reopened.ID)
	}

	// An hour ahead, the two pages finished within the last day are history.
	later := sources.PollOption{FinishedAfter: time.Now().Add(time.Hour)}
	full, err := h.src.Poll(ctx, "", later)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range full.Tasks {
		if task.State.Final() {
			t.Fatalf("the full poll with a later horizon holds the finished %s", task.ID)
		}
	}
	if full.Archived != len(h.old)+2 {
		t.Fatalf("the later full poll counts %d finished earlier, want %d", full.Archived, len(h.old)+2)
	}
}

// The history count's query carries filter_properties in its URL; it is
// still a read, retried on 429 and 5xx.
func TestAQueryWithFilterPropertiesIsARead(t *testing.T) {
	if !idempotent(http.MethodPost, "/v1/data_sources/x/query?filter_properties=title") {
		t.Fatal("a query with filter_properties is not retried")
	}
}
