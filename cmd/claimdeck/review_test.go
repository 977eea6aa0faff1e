package main

import (
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/sources/notion"
)

// todaySource is the `sources:` entry of a notion source on the
// emulator's database set up as today's notion-task skill does.
func todaySource(t *testing.T) (string, *emulatorWorkspace) {
	t.Helper()
	yaml, w := notionSource(t)
	yaml = strings.Replace(yaml, "name: team-notion", "name: skill-notion", 1)
	return strings.Replace(yaml, w.dbs[notion.PresetNtask], w.dbs[todayDB], 1), w
}

func TestDoctorSaysWhichNtaskGenerationItFound(t *testing.T) {
	seed, _ := notionSource(t)
	today, _ := todaySource(t)
	c := newCLI(t, seed+today)
	var out strings.Builder
	if code := run(context.Background(), []string{"--config", c.conf, "doctor"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("doctor exits %d:\n%s", code, out.String())
	}
	for _, want := range []string{"read as ntask (seed 002)", "read as ntask (today's notion-task skill)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor does not say %q:\n%s", want, out.String())
		}
	}
}
