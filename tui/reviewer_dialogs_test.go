package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/claimdeck/claimdeck/model"
)

// Approve and rework show what a reviewer decides on: who submitted the
// task (the claim's holder when the review gave no name, never "unnamed
// holder" alone, read from the task's trail when polls carry none), the
// summary and the artifacts.
func TestReviewDialogsShowTheSubmitterSummaryAndArtifacts(t *testing.T) {
	for _, key := range []string{"a", "w"} {
		r := newRig(t)
		r.noTrails = true // as a SQL source polls: the submitter is in the trail Get reads
		r.size(120, 40)
		r.prod.Put((&model.Task{ID: "20", Key: "TASK-20", Title: "Write the runbook", State: model.StateReview, RawStatus: "review", CreatedAt: model.StampOf(t0.Add(-time.Hour)), EditedAt: model.StampOf(t0.Add(-5 * time.Minute))}).WithMore(model.More{Reason: "runbook written, tested on staging", Artifacts: "https://git.example/pr/42", History: []model.Event{{At: t0.Add(-30 * time.Minute), Actor: "bot-7", Action: "claim"},
			{At: t0.Add(-5 * time.Minute), Actor: model.WriterName("", ""), Action: "review", Reason: "runbook written, tested on staging"}}}))
		r.poll()
		r.selectKey(parkedView, "TASK-20")
		r.press(key)
		s := r.screen()
		for _, want := range []string{"submitter bot-7 (held the claim", "summary  runbook written, tested on staging", "artifacts https://git.example/pr/42"} {
			if !strings.Contains(s, want) {
				t.Fatalf("%s: the dialog lacks %q:\n%s", key, want, s)
			}
		}
	}
}

// Help lists every key of the view on screen, the reviewer's and a
// person's own keys included, whatever the cursor is on.
func TestHelpListsEveryActionKeyInEveryTaskView(t *testing.T) {
	r := newRig(t)
	r.size(120, 40)
	for _, v := range []string{"1", "3"} {
		r.press(v)
		help := ansi.Strip(strings.Join((&helpDialog{}).lines(r.m.env(), 120), "\n"))
		for _, want := range []string{"a approve", "w rework", "d complete mine", "v send mine to review", "b block mine", "u give mine back", "c claim", "r release"} {
			if !strings.Contains(help, want) {
				t.Fatalf("view %s: help lacks %q:\n%s", v, want, help)
			}
		}
	}
}

// The open detail's timeline shows the action just taken from it, when
// polls carry no trails (a SQL source's do not): the detail reads the
// trail again.
func TestTheLiveDetailsTimelineShowsTheActionJustTaken(t *testing.T) {
	r := newRig(t)
	r.noTrails = true
	r.poll()
	r.size(120, 40)
	r.selectKey(leasesView, "TASK-4")
	r.press("enter", "r") // force-release from the detail
	r.typeText("agent wedged")
	r.press("enter", "y")
	r.poll()
	td, ok := r.m.dialogs[len(r.m.dialogs)-1].(*taskDialog)
	if !ok {
		t.Fatalf("the detail is not on top: %T", r.m.dialogs[len(r.m.dialogs)-1])
	}
	r.screen()
	if !strings.Contains(strings.Join(td.lines, "\n"), "alice: agent wedged") {
		t.Fatalf("the timeline lacks the force-release:\n%s", strings.Join(td.lines, "\n"))
	}
}

// TestTheDashboardOffersWhatItsDeskWouldApply: alice sent TASK-20 to
// review; her approve is refused before any dialog while the desk refuses
// self-approval, and offered once the desk allows it (review:
// {self_approve: true}): the dashboard asks the desk Apply goes through.
func TestTheDashboardOffersWhatItsDeskWouldApply(t *testing.T) {
	r := newRig(t)
	r.prod.Put((&model.Task{ID: "20", Key: "TASK-20", Title: "Write the runbook", State: model.StateReview, RawStatus: "review", CreatedAt: model.StampOf(t0.Add(-time.Hour)), EditedAt: model.StampOf(t0.Add(-5 * time.Minute))}).WithMore(model.More{ReviewBy: "HUMAN:alice", History: []model.Event{{At: t0.Add(-5 * time.Minute), Actor: "HUMAN:alice", Action: "review"}}}))
	r.poll()
	r.selectKey(parkedView, "TASK-20")
	r.press("a")
	if len(r.m.dialogs) != 0 || !strings.Contains(r.screen(), "sent this task to review and cannot approve") {
		t.Fatalf("alice's approve of her own review was not refused up front:\n%s", r.screen())
	}
	r.desk.SelfApprove = true
	r.selectKey(parkedView, "TASK-20")
	r.press("a")
	if d, ok := r.m.dialogs[len(r.m.dialogs)-1].(*formDialog); !ok || d.req.Action != model.ActionApprove {
		t.Fatalf("with self_approve the approve dialog did not open:\n%s", r.screen())
	}
}
