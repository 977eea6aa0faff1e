package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/model"
)

// A lock file nobody can read: the dashboard shows no lease, heartbeat or
// status it did not read, and the file's name stays on screen at 80 and
// 60 columns (its directory gives way, never the name).
func TestABrokenLockFileShowsNothingMadeUpAndKeepsItsName(t *testing.T) {
	const file = "broken-task-with-a-long-name-0001.lock"
	r := newRig(t)
	r.prod.Put((&model.Task{ID: "broken-task-with-a-long-name-0001", Key: "broken-task-with-a-long-name-0001", State: model.StateClaimed, CreatedAt: model.StampOf(t0.Add(-5 * 60e9)), EditedAt: model.StampOf(t0.Add(-5 * 60e9))}).WithMore(model.More{Problem: "/srv/agents/shared/queues/production/.locks/" + file + ": not valid JSON: invalid character 'h' in literal true"}))
	r.poll()
	for _, sz := range [][2]int{{80, 24}, {60, 20}} {
		r.size(sz[0], sz[1])
		r.selectKey(staleView, "broken-task-with-a-long-name-0001")
		// The key column cuts a long name in the middle: its start and its
		// number stay.
		if s := r.screen(); !regexp.MustCompile(`broke\S*…\S*-0001 `).MatchString(s) {
			t.Fatalf("%dx%d: the Stale row lost the file's name:\n%s", sz[0], sz[1], s)
		}
		r.press("enter")
		r.screen()
		s := strings.Join(r.m.dialogs[0].(*taskDialog).lines, "\n") // every line, scrolled or not
		if !strings.Contains(r.screen(), file) {
			t.Fatalf("%dx%d: the detail lost the file's name:\n%s", sz[0], sz[1], s)
		}
		for _, made := range []string{"healthy", "expires in", "in progress", "(raw claimed)", "(raw lock)"} {
			if strings.Contains(strings.ToLower(s), made) {
				t.Fatalf("%dx%d: the detail shows %q, which the file does not say:\n%s", sz[0], sz[1], made, s)
			}
		}
		if !strings.Contains(s, "— (the file is broken)") {
			t.Fatalf("%dx%d: the lease is not said to be unknown:\n%s", sz[0], sz[1], s)
		}
		r.press("esc")
	}
}
