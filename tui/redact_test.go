package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/hub"
)

// A refused action whose error quotes a DSN (a driver error, not ours)
// shows on the screen without its password: in the banner, in the dialog
// and in the Activity trail.
func TestRefusalsOnScreenAreRedacted(t *testing.T) {
	m, err := New(Options{Hub: hub.New(hub.Config{}), Now: func() time.Time { return t0 }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	seen := &model.Task{ID: "T-1", Source: "gov", Title: "rotate keys"}
	m.Update(actionMsg{req: sources.Request{Action: model.ActionForceRelease, Seen: seen},
		err: errors.New("failed to connect to postgres://agent:hunter2@db/q?sslmode=disable")})
	if screen := m.View().Content; strings.Contains(screen, "hunter2") {
		t.Fatalf("the dashboard shows a password:\n%s", screen)
	}
}
