package lockdir

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// knownField, which keeps a copied file's unknown fields from repeating a
// known one, names exactly the fields a file claimdeck writes holds.
func TestKnownFieldsAreTheFieldsWritten(t *testing.T) {
	at := time.Date(2026, 2, 1, 2, 0, 0, 0, time.UTC)
	r := &record{TaskID: "x", Agent: "a", ClaimedAt: at, ExpiresAt: at, Description: "d", CompletedAt: at, FailedAt: at,
		Status: "s", Reason: "r", Heartbeat: at, Title: "t", TaskType: "tt", Priority: 2, Class: model.ClassExpedite,
		LockToken: "k", HolderKind: "AGENT", RunID: "run", Node: "n", Escalation: "stale", UnblockAction: "u",
		NextCheckAt: at, Artifacts: "art", ReviewBy: "w1", CreatedAt: at, Replaces: "v", Reservation: &wireReservation{For: "b"},
		History: []wireEvent{{At: "2026-02-01T02:00:00Z", Actor: "a", Action: "claim"}}}
	var written map[string]json.RawMessage
	if err := json.Unmarshal(r.marshal(), &written); err != nil {
		t.Fatal(err)
	}
	for k := range written {
		if !knownField[k] {
			t.Errorf("%s is written but not in knownField", k)
		}
	}
	for k := range knownField {
		if _, ok := written[k]; !ok {
			t.Errorf("%s is in knownField but never written", k)
		}
	}
	if back, problem := parseLock(r.marshal()); problem != "" || len(back.extra) != 0 {
		t.Errorf("a written file reads back with problem %q and unknown fields %v", problem, back.extra)
	}
}

// A flood of comments is trimmed before claimdeck's own entries: sixteen
// comments of 16,000 '<' (6 bytes each in JSON) or a hundred short ones
// never push the claim or the review out of the file.
func TestCommentFloodKeepsTheTrail(t *testing.T) {
	own := []wireEvent{{At: "2026-02-01T02:00:00Z", Actor: "w1", Action: "claim"}, {At: "2026-02-01T02:01:00Z", Actor: "w1", Action: "review"}}
	r := &record{TaskID: "x", Status: "review", ReviewBy: "w1", History: append([]wireEvent(nil), own...)}
	big := strings.Repeat("<", 16000)
	for range 16 {
		r.addEvent(model.Event{At: time.Now(), Actor: "w1", Action: noteAction, Reason: big})
	}
	data := r.marshal()
	if len(data) > maxFile {
		t.Fatalf("the file is %d bytes, over %d", len(data), maxFile)
	}
	for range 200 {
		r.addEvent(model.Event{At: time.Now(), Actor: "w1", Action: noteAction, Reason: "spam"})
	}
	back, problem := parseLock(r.marshal())
	if problem != "" {
		t.Fatal(problem)
	}
	for _, want := range own {
		if !slices.ContainsFunc(back.History, func(e wireEvent) bool { return e.Action == want.Action && e.Actor == want.Actor }) {
			t.Fatalf("the %s was pushed out by comments: %d events left", want.Action, len(back.History))
		}
	}
	if back.ReviewBy != "w1" {
		t.Fatalf("review_by = %q", back.ReviewBy)
	}
}
