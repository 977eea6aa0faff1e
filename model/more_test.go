package model

import "testing"

// A task's seldom-filled part sits behind a pointer, but it behaves as the
// task's own fields did: a copy of the task keeps what it had when the
// other is written, and a task with none of it holds no allocation.
func TestACopyOfATaskKeepsItsOwnMore(t *testing.T) {
	a := Task{ID: "1"}
	a.SetMore(More{Reason: "first", History: []Event{{Action: "claim"}}})
	b := a
	b.EditMore().Reason = "second"
	if a.More().Reason != "first" || b.More().Reason != "second" {
		t.Errorf("after writing the copy: original %q, copy %q", a.More().Reason, b.More().Reason)
	}
	if len(b.More().History) != 1 {
		t.Errorf("the copy lost its history: %v", b.More().History)
	}
	var none Task
	if none.More().Problem != "" || none.UnblockAction() != "" || !none.NextCheckAt().IsZero() {
		t.Error("a task with no More reads as not empty")
	}
	none.SetMore(More{})
	if none.more != nil {
		t.Error("an empty More was kept behind the pointer")
	}
}

func TestACopyOfATaskKeepsItsOwnClaim(t *testing.T) {
	a := (&Task{ID: "1", State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "SANDMAN", Token: "t-1"})
	b := *a
	b.EditClaim().Name = "ORACLE"
	if a.Claim().Name != "SANDMAN" || b.Claim().Name != "ORACLE" || b.Claim().Token != "t-1" {
		t.Errorf("after writing the copy: original %+v, copy %+v", a.Claim(), b.Claim())
	}
	b.SetClaim(Claim{})
	if b.claim != nil || b.Held() || !a.Held() {
		t.Errorf("a released copy: %v kept behind the pointer; original held %v", b.claim, a.Held())
	}
	var none Task
	if none.Claim() != (Claim{}) || none.Held() || !none.Claim().LastAlive().IsZero() {
		t.Error("a task with no claim reads as held")
	}
}
