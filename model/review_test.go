package model

import (
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
