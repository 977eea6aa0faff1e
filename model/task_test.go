package model

import "testing"

func TestHandoffPriorityRoundTripsThroughSeed001Words(t *testing.T) {
	for _, c := range []struct {
		task int
		word string
		back int
	}{{PriorityCritical, "critical", PriorityCritical}, {PriorityHigh, "urgent", PriorityHigh}, {PriorityMedium, "normal", PriorityMedium},
		{PriorityLow, "normal", PriorityMedium}, {PriorityNone, "normal", PriorityMedium}, {9, "critical", PriorityCritical}} {
		w := HandoffPriority(c.task)
		back, err := ParsePriority(w)
		if w != c.word || err != nil || back != c.back {
			t.Errorf("priority %d → %q → %d (%v), want %q → %d", c.task, w, back, err, c.word, c.back)
		}
	}
}
