package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
)

func TestArchiveQueryOfAFilter(t *testing.T) {
	for _, c := range []struct {
		filter string
		want   *sources.ArchiveQuery
	}{
		{"", nil},
		{"rotate agent:alpha", nil},
		{"state:queued", nil},
		{"state:", nil},
		{"state:done", &sources.ArchiveQuery{State: model.StateDone}},
		{"state:FAIL certs", &sources.ArchiveQuery{State: model.StateFailed, Text: "certs"}},
		{"tls state:c", &sources.ArchiveQuery{State: model.StateCanceled, Text: "tls"}},
		{"!state:done", nil},
		{"!tls certs state:done", &sources.ArchiveQuery{State: model.StateDone, Text: "certs"}},
	} {
		f, err := model.ParseFilter(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		got := archiveQuery(f)
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("filter %q asks the archive %+v, want %+v", c.filter, got, c.want)
		}
	}
}

// A kept filter naming a final state brings the history the hub leaves in
// the backend; dropping the filter lets it go.
func TestAFilterForDoneTasksReadsTheArchive(t *testing.T) {
	r := newRig(t)
	r.prod.Put(&model.Task{ID: "old", Key: "TASK-OLD", Title: "Ship last year's release notes", State: model.StateDone,
		RawStatus: "done", EditedAt: model.StampOf(t0.Add(-300 * 24 * time.Hour))})
	shown := func(what string, want bool) {
		t.Helper()
		var s hub.Snapshot
		select {
		case s = <-r.hub.Snapshots():
		default:
			t.Fatalf("%s: the hub published nothing", what)
		}
		found := false
		for _, st := range s.Sources {
			for task := range st.Tasks.All() {
				found = found || task.ID == "old"
			}
		}
		if found != want {
			t.Fatalf("%s: the year-old done task in the snapshot = %v, want %v", what, found, want)
		}
	}
	r.press("/")
	r.typeText("state:done release")
	r.press("enter")
	shown("after a kept filter for done tasks", true)
	r.press("esc")
	shown("after the filter is dropped", false)
	r.press("/")
	r.typeText("release")
	r.press("enter")
	select {
	case <-r.hub.Snapshots():
		t.Fatal("a filter that names no final state read the archive")
	default:
	}
}

// The footer says when a source is still loading past its first screen,
// and how much history stays in the backend.
func TestFooterSaysLoadingAndCountsHistory(t *testing.T) {
	r := newRig(t)
	s := hub.Snapshot{Sources: []hub.SourceState{{Name: "prod", Status: hub.StatusOK, Updated: r.now, Loading: true, Archived: 1234,
		Tasks: hub.TasksOf([]*model.Task{{Source: "prod", ID: "1", Key: "TASK-1", Title: "Rotate TLS", State: model.StateQueued}})}}}
	r.m.Update(snapshotMsg(s))
	r.size(160, 24)
	if screen := r.screen(); !strings.Contains(screen, "loading…") || !strings.Contains(screen, "1234 finished earlier") {
		t.Fatalf("the footer of a source still loading, with history in the backend:\n%s", screen)
	}
	s.Sources[0].Loading, s.Sources[0].Archived = false, 0
	r.m.Update(snapshotMsg(s))
	if screen := r.screen(); strings.Contains(screen, "loading…") || strings.Contains(screen, "finished earlier") {
		t.Fatalf("the footer once loaded, without history:\n%s", screen)
	}
}
