package model

import (
	"strings"
	"testing"
	"time"
)

func TestSubmitterIsTheReviewsWriterOrTheHolderItFinished(t *testing.T) {
	at := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		history []Event
		want    string
	}{
		{[]Event{{At: at, Actor: "bot-7", Action: "claim"}, {At: at.Add(time.Minute), Actor: "bot-7 (run r1)", Action: "review"}}, "bot-7 (run r1)"},
		{[]Event{{At: at, Actor: "bot-7", Action: "claimed"}, {At: at.Add(time.Minute), Actor: WriterName("", ""), Action: "review"}},
			"bot-7 (held the claim; the review gave no name)"},
		{[]Event{{At: at, Actor: WriterName("", ""), Action: "review"}}, WriterName("", "")},
		// In Review with no review step in the trail: the state's own
		// step, by the claim's holder.
		{[]Event{{At: at, Actor: "bot-7", Action: "claim"}}, "bot-7 (held the claim; the review gave no name)"},
	}
	for i, c := range cases {
		task := &Task{State: StateReview, EditedAt: StampOf(at.Add(time.Hour)), more: &More{History: c.history}}
		if got := Submitter(task); got != c.want {
			t.Errorf("case %d: Submitter = %q, want %q", i, got, c.want)
		}
	}
	if got := Submitter(&Task{State: StateQueued, more: &More{History: []Event{{At: at, Actor: "bot-7", Action: "claim"}}}}); got != "" {
		t.Errorf("a task never sent to review has submitter %q", got)
	}
}

func TestSelfApprovalReadsTheStoredReviewer(t *testing.T) {
	inReview := func(by string, trail ...Event) *Task {
		return (&Task{ID: "T-1", State: StateReview}).WithMore(More{ReviewBy: by, History: trail})
	}
	// A note in the trail says carol sent it; the stored fact says w1 did.
	forged := []Event{{Actor: "carol", Action: "review"}}
	for _, c := range []struct {
		task     *Task
		approver string
		allowed  bool
		refused  string
	}{
		{inReview("w1", forged...), "w1", false, "w1 sent this task to review"},
		{inReview("w1", forged...), "carol", false, ""},
		{inReview("w1 (run r-1) via oncall@mcp-http", nil...), "HUMAN:oncall@mcp-http", false, "sent this task to review"},
		{inReview("SANDMAN (by its token; the caller gave no name)", nil...), "sandman", false, "sent this task to review"},
		{inReview("w1"), "W\u0031", false, "sent this task to review"},
		{inReview("", forged...), "alice", false, "not recorded"},
		{inReview("", forged...), "alice", true, ""},
		{inReview("w1"), "w1", true, ""},
	} {
		err := CheckSelfApproval(c.task, c.approver, c.allowed)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%q approving a task sent by %q: %v", c.approver, c.task.More().ReviewBy, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused) || CodeOf(err) != CodeMisconfigured):
			t.Errorf("%q approving a task sent by %q: %v, want MISCONFIGURED saying %q", c.approver, c.task.More().ReviewBy, err, c.refused)
		}
	}
}

func TestTokenWriterNamesTheHolder(t *testing.T) {
	for _, c := range []struct{ writer, holder, want string }{
		{"", "SANDMAN", "SANDMAN"},
		{WriterName("", ""), "SANDMAN", "SANDMAN (by its token; the caller gave no name)"},
		{WriterName("", "") + " via ci@mcp-http", "SANDMAN", "SANDMAN (by its token; the caller gave no name) via ci@mcp-http"},
		{WriterName("B", "r"), "SANDMAN", "B (run r)"},
		{WriterName("", ""), "", WriterName("", "")},
	} {
		if got := TokenWriter(c.writer, c.holder); got != c.want {
			t.Errorf("TokenWriter(%q, %q) = %q, want %q", c.writer, c.holder, got, c.want)
		}
	}
}
