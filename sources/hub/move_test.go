package hub

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// A dashboard over two sources, one moved into the other while it runs:
// the moved feed, served by its target through sources.Follow, shows no
// task twice, and Activity says where its tasks went.
func TestHubMovedSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(ctx context.Context, name string) (sources.Source, error) {
		return sqlstore.Open(ctx, sqlstore.Config{Name: name, Driver: "sqlite", Path: filepath.Join(dir, name+".db"), Create: true})
	}
	var follow sources.OpenByName
	follow = func(ctx context.Context, name string) (sources.Source, error) {
		s, err := open(ctx, name)
		if err != nil {
			return nil, err
		}
		return sources.Follow(s, follow), nil
	}
	local, err := follow(ctx, "local")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	governance, err := follow(ctx, "governance")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { governance.Close() })
	if _, err := local.Create(ctx, sources.NewTask{ID: "t1", Title: "index the logs"}); err != nil {
		t.Fatal(err)
	}
	h := start(t, Config{Feeds: []Feed{{Source: local, Every: 20 * time.Millisecond}, {Source: governance, Every: 20 * time.Millisecond}}})
	await(t, h, "the first load", func(s Snapshot) bool { return find(s, "local", "t1") != nil })

	target := sources.Target{Name: "governance", Open: func(ctx context.Context, _ bool) (sources.Source, error) { return open(ctx, "governance") }}
	if _, err := sources.Move(ctx, local, target, sources.MoveOptions{}); err != nil {
		t.Fatal(err)
	}
	said := false
	await(t, h, "the move", func(s Snapshot) bool {
		for _, n := range s.Notices {
			said = said || n.Source == "local" && strings.Contains(n.What, "moved to governance")
		}
		return said && find(s, "governance", "t1") != nil && s.Len() == 1
	})
}
