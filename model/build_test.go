package model

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuild(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "9caf0489830f88031fbfb1e588f103321b4b7af9"},
		{Key: "vcs.time", Value: "2026-11-27T09:28:06Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	cases := []struct {
		name, linked, main string
		settings           []debug.BuildSetting
		want, wantNote     string
	}{
		{"release", "v1.2.3", "(devel)", vcs, "v1.2.3", ""},
		{"go install @version", "", "v0.4.0", nil, "v0.4.0", ""},
		{"clone, module pseudo-version", "", "v0.0.0-20261127092806-9caf0489830f", vcs, "v0.0.0-20261127092806-9caf0489830f", ""},
		{"commit only", "", "(devel)", vcs, "devel 9caf0489830f (2026-11-27T09:28:06Z, modified)", ""},
		{"nothing stamped", "", "(devel)", nil, "devel (unknown commit)", "-buildvcs=false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/claimdeck/claimdeck", Version: c.main}, Settings: c.settings}
			b := readBuild(c.linked, bi, true)
			if got := b.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
			if c.wantNote == "" && b.Note != "" || !strings.Contains(b.Note, c.wantNote) {
				t.Errorf("Note = %q, want it to mention %q", b.Note, c.wantNote)
			}
			if b.Go != "go1.26.8" {
				t.Errorf("Go = %q", b.Go)
			}
		})
	}
	if b := readBuild("", nil, false); b.String() != "devel (unknown commit)" || b.Note == "" {
		t.Errorf("no build info: %+v", b)
	}
}
