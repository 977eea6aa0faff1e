package hub

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// A big queue paints its first screen, in pull order and marked loading,
// before the full load replaces it; neither is activity.
func TestFirstScreenBeforeTheFullLoad(t *testing.T) {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: filepath.Join(t.TempDir(), "q.db"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var all []*model.Task
	for i := range 40 {
		task, err := store.Create(ctx, sources.NewTask{Title: "task", Priority: i % 5, Class: model.Class(1 + i%4)})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, task)
	}
	model.SortPullOrder(all)
	h := New(Config{Feeds: []Feed{{Source: store}}, FirstPage: 7})
	h.poll(ctx, h.feeds[0])
	s := <-h.Snapshots()
	first := s.Sources[0].Tasks.AppendTo(nil)
	model.SortPullOrder(first)
	if !s.Sources[0].Loading || len(first) != 7 || len(s.Transitions) != 0 {
		t.Fatalf("first screen: %d tasks, loading %v, %d transitions; want 7, true, 0", len(first), s.Sources[0].Loading, len(s.Transitions))
	}
	for i, task := range first {
		if task.ID != all[i].ID {
			t.Fatalf("first screen row %d is %s, want %s: the first screen must be the head of the pull order", i, task.ID, all[i].ID)
		}
	}
	h.poll(ctx, h.feeds[0])
	s = <-h.Snapshots()
	if s.Sources[0].Loading || s.Len() != 40 || len(s.Transitions) != 0 {
		t.Fatalf("after the full load: %d tasks, loading %v, %d transitions; want 40, false, 0", s.Len(), s.Sources[0].Loading, len(s.Transitions))
	}
}
