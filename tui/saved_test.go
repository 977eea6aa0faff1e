package tui

import (
	"errors"
	"strings"
	"testing"
)

// TestSaveAndLoadFilter: :save keeps the filter in force through
// SaveFilter, :load brings it back after the filter was cleared, tab
// completes its name, and the mistakes each say what to do.
func TestSaveAndLoadFilter(t *testing.T) {
	kept := map[string]string{}
	r := newRig(t, func(o *Options) {
		o.Filters = map[string]string{"mine": "agent:alpha"}
		o.SaveFilter = func(name, expr string) error { kept[name] = expr; return nil }
	})
	run := func(line string) {
		r.press(":")
		r.typeText(line)
		r.press("enter")
	}
	run("save tls")
	if !strings.Contains(r.screen(), ":save tls: no filter to save") {
		t.Fatalf(":save without a filter:\n%s", r.screen())
	}
	run("filter state:queued tls")
	run("save tls")
	if kept["tls"] != "state:queued tls" || !strings.Contains(r.screen(), "filter tls saved") {
		t.Fatalf(":save tls kept %q\n%s", kept["tls"], r.screen())
	}
	run("save two words")
	if !strings.Contains(r.screen(), "a name is lower-case letters, digits, - and _") {
		t.Fatalf(":save with a space:\n%s", r.screen())
	}
	r.press("esc", "esc")
	if r.m.input.filter.Value() != "" {
		t.Fatalf("esc kept the filter %q", r.m.input.filter.Value())
	}
	r.press(":")
	r.typeText("load t")
	r.press("tab")
	if got := r.m.input.cmdline.Value(); got != "load tls " {
		t.Fatalf("tab completed to %q, want the saved name", got)
	}
	r.press("enter")
	if r.m.input.filter.Value() != "state:queued tls" {
		t.Fatalf(":load tls set the filter to %q", r.m.input.filter.Value())
	}
	run("load mine")
	if r.m.input.filter.Value() != "agent:alpha" {
		t.Fatalf(":load mine, from the config, set %q", r.m.input.filter.Value())
	}
	run("load tsl")
	if !strings.Contains(r.screen(), ":load tsl: no such filter — did you mean tls?") || r.m.input.filter.Value() != "agent:alpha" {
		t.Fatalf(":load of an unknown name:\n%s", r.screen())
	}
}

// TestSaveFilterFailureIsShown: a config file that cannot be written
// leaves nothing saved and says why.
func TestSaveFilterFailureIsShown(t *testing.T) {
	r := newRig(t, func(o *Options) {
		o.SaveFilter = func(string, string) error { return errors.New("config.json: filters are saved only into a YAML file") }
	})
	r.press(":")
	r.typeText("filter tls")
	r.press("enter", ":")
	r.typeText("save tls")
	r.press("enter")
	if _, ok := r.m.input.filters["tls"]; ok || !strings.Contains(r.screen(), "saved only into a YAML file") {
		t.Fatalf("a failed save: %v\n%s", r.m.input.filters, r.screen())
	}
}

// TestSavedFiltersFromConfigMustParse: a saved filter that could never
// load is refused when the dashboard starts, by name.
func TestSavedFiltersFromConfigMustParse(t *testing.T) {
	for _, bad := range []map[string]string{{"x": "level>=nonsense"}, {"two words": "tls"}} {
		if _, err := New(Options{Hub: newRig(t).m.hub, Filters: bad}); err == nil || !strings.Contains(err.Error(), "filters: ") {
			t.Fatalf("%v: %v", bad, err)
		}
	}
}
