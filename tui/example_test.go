package tui_test

import (
	"context"
	"log"
	"os"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
	"github.com/claimdeck/claimdeck/theme"
	"github.com/claimdeck/claimdeck/tui"
)

// How the dashboard door (internal/dashboard) wires the dashboard: sources into a hub, the desk that
// applies and journals human actions, then Run until the user quits.
func Example() {
	ctx := context.Background()
	store, err := sqlstore.Open(ctx, sqlstore.Config{Name: "local", Driver: "sqlite", Path: os.ExpandEnv("$HOME/.local/share/claimdeck/queue.db"), Create: true})
	if err != nil {
		log.Fatal(err)
	}
	journal, err := sources.OpenJournal(os.ExpandEnv("$HOME/.local/state/claimdeck/audit.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	history, _ := sources.ReadJournal(journal.Path())
	desk := &sources.Desk{Actor: "alice", Journal: journal, ReadOnly: func(source string) bool { return false }}
	// Policy and mesh ride in the hub's snapshots; no Nodes: no mesh configured, and the Nodes view says so.
	h := hub.New(hub.Config{Feeds: []hub.Feed{{Source: store}}, Desk: desk, Policy: model.DefaultPolicy()})
	mode, _ := theme.ParseMode("dark") // --theme
	err = tui.Run(ctx, tui.Options{
		Hub:     h,
		Theme:   theme.Options{Mode: mode, SourceColors: map[string]string{"local": "green"}},
		Keys:    map[string][]string{"handoff": {"H"}}, // from config; Rebind checks it
		Journal: history,
	})
	if err != nil {
		log.Fatal(err)
	}
}
