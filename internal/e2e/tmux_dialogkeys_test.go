package e2e

import (
	"strings"
	"testing"
)

// In a task's detail, ":sort pri desc⏎" followed by y used to open
// "Force-release …?" at its r and answer it yes. Typed into the real
// binary's open detail, key by key and as one burst, it changes nothing:
// the live claim keeps its holder and token.
func TestTmuxTextTypedIntoAnOpenDetailChangesNoTask(t *testing.T) {
	f := newFirstContact(t)
	p := startTmux(t, 120, 40, "--config", f.conf)
	p.await("the dashboard", func(s string) bool { return strings.Contains(s, "Queue") })
	p.keys("2")
	p.await("the live lease", func(s string) bool { return strings.Contains(s, "steady") })
	p.keys("Enter")
	p.await("the detail", func(s string) bool { return strings.Contains(s, f.liveTitle) && strings.Contains(s, "esc close") })
	for _, r := range ":sort pri desc" {
		p.keys(string(r))
	}
	p.await("the text dropped", func(s string) bool { return strings.Contains(s, `dropping ":sort pri desc"`) })
	p.keys("Enter", "y")
	p.keys(":sort pri desc") // one burst, as a fast typist or a paste sends it
	p.keys("Enter", "y")
	s := p.screen()
	if strings.Contains(s, "[y/N]") || strings.Contains(s, "Force-release") {
		t.Fatalf("the typed text reached an action:\n%s", s)
	}
	got := f.c.Run(0, "get", "--task", f.live).Task
	if got.State != "claimed" || got.Agent != "steady" || got.LockToken == "" {
		t.Fatalf("the live claim changed: %+v\n%s", got, s)
	}
	p.keys("Escape", "q")
}
