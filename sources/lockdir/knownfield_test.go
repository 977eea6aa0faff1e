package lockdir

import (
	"encoding/json"
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
		NextCheckAt: at, Artifacts: "art", CreatedAt: at, Replaces: "v", Reservation: &wireReservation{For: "b"},
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
