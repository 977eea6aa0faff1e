package mesh

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// A record written when claim times were kept to the nanosecond still
// holds what it sent once they are kept to the microsecond: an upgrade
// does not notify a stuck claim a second time.
func TestARecordOfNanosecondClaimTimesStillHoldsItsNotifications(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.json")
	old, err := OpenRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	claims := map[string]time.Time{
		"7":  time.Date(2026, 11, 27, 2, 0, 0, 123456789, time.UTC),
		"8":  time.Date(2026, 11, 27, 2, 0, 0, 100000100, time.UTC), // .1 once cut
		"9":  time.Date(2026, 11, 27, 2, 0, 0, 900, time.UTC),       // no fraction once cut
		"10": time.Date(2026, 11, 27, 2, 0, 0, 5000, time.UTC),      // already to the microsecond
	}
	for id, at := range claims {
		// The key as the build before wrote it, from a time.Time.
		key := "prod/" + id + "@" + at.Format(time.RFC3339Nano) + "/" + model.LevelNotify.String() + "→ALPHA"
		if err := old.Put(key, sent); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := OpenRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	held, err := OpenRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	release, err := held.Hold()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for id, at := range claims {
		task := (&model.Task{Source: "prod", ID: id}).WithClaim(model.Claim{Holder: model.HolderAgent, Name: "bot", ClaimedAt: model.StampOf(at)})
		key := incidentOf(task) + "→ALPHA"
		if !rec.Has(key) || !held.Has(key) {
			t.Errorf("task %s: the record lost %q (opened: %v, held: %v)", id, key, rec.Has(key), held.Has(key))
		}
	}
}
