package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/sources/hub"
)

// The dashboard's history window defaults to a day; a window that keeps
// nothing is refused by name.
func TestHistoryWindowConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		path := filepath.Join(dir, "claimdeck.yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg, err := LoadConfig(write("actor: alice\n"))
	if err != nil || cfg.HistoryWindow != hub.DefaultWindow {
		t.Fatalf("no history_window: %v, %v; want the default %v", cfg, err, hub.DefaultWindow)
	}
	if cfg, err = LoadConfig(write("history_window: 2h\n")); err != nil || cfg.HistoryWindow.Hours() != 2 {
		t.Fatalf("history_window: 2h: %v, %v", cfg, err)
	}
	if _, err := LoadConfig(write("history_window: -1h\n")); err == nil || !strings.Contains(err.Error(), "history_window must be positive") {
		t.Fatalf("history_window: -1h: %v, want the key named", err)
	}
}
