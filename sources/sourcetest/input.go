package sourcetest

import (
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// testBadInput: invalid UTF-8, NUL bytes, absurd leases and priorities out
// of the stored range are MISCONFIGURED on every operation, and nothing is
// written — not a task, not a lease, not a trail entry.
func testBadInput(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	const bad = "caf\xe9 \xff"
	free := k.create(t, sources.NewTask{Title: "free task"})
	held := k.create(t, sources.NewTask{Title: "held task"})
	tok := k.claim(t, held.ID, "holder").Claim.Token
	before, err := k.src.Poll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	heldBefore, freeBefore := k.get(t, held.ID), k.get(t, free.ID)
	prio, title := 1<<31, bad
	for _, c := range []struct {
		what string
		try  func() error
	}{
		{"create with an invalid UTF-8 title", func() error { _, err := k.src.Create(ctx, sources.NewTask{Title: bad}); return err }},
		{"create with a NUL in the description", func() error {
			_, err := k.src.Create(ctx, sources.NewTask{Title: "ok", Description: "a\x00b"})
			return err
		}},
		{"create with priority 2147483648", func() error {
			_, err := k.src.Create(ctx, sources.NewTask{Title: "ok", Priority: 1 << 31})
			return err
		}},
		{"claim with --lease -5s", func() error {
			_, err := k.src.Claim(ctx, free.ID, sources.ClaimRequest{Agent: "a", Lease: -5 * time.Second})
			return err
		}},
		{"claim with --lease 2562047h", func() error {
			_, err := k.src.Claim(ctx, free.ID, sources.ClaimRequest{Agent: "a", Lease: 2562047 * time.Hour})
			return err
		}},
		{"claim-next with an invalid UTF-8 agent", func() error {
			_, err := k.src.ClaimNext(ctx, sources.ClaimRequest{Agent: bad})
			return err
		}},
		{"heartbeat with --lease -5s", func() error {
			_, err := k.src.Heartbeat(ctx, held.ID, tok, -5*time.Second)
			return err
		}},
		{"heartbeat with --lease 2562047h", func() error {
			_, err := k.src.Heartbeat(ctx, held.ID, tok, 2562047*time.Hour)
			return err
		}},
		{"complete with an invalid UTF-8 artifact", func() error {
			_, err := k.src.Finish(ctx, held.ID, tok, sources.Outcome{State: model.StateDone, Artifacts: bad})
			return err
		}},
		{"block with an invalid UTF-8 reason", func() error {
			_, err := k.src.Finish(ctx, held.ID, tok, sources.Outcome{State: model.StateBlocked, Reason: bad})
			return err
		}},
		{"takeover with an invalid UTF-8 reason", func() error {
			_, err := k.src.Takeover(ctx, held.ID, sources.Human{Actor: "alice", Reason: bad, Expect: heldBefore.Version})
			return err
		}},
		{"hand-off to an invalid UTF-8 agent", func() error {
			_, err := k.src.Handoff(ctx, held.ID, sources.Handoff{Token: tok, To: bad, Human: sources.Human{Actor: "holder"}})
			return err
		}},
	} {
		wantCode(t, c.what, c.try(), model.CodeMisconfigured)
	}
	_, err = k.src.Update(ctx, free.ID, sources.Edit{Actor: "alice", Title: &title})
	wantCode(t, "update with an invalid UTF-8 title", err, model.CodeMisconfigured)
	_, err = k.src.Update(ctx, free.ID, sources.Edit{Actor: "alice", Priority: &prio})
	wantCode(t, "update with priority 2147483648", err, model.CodeMisconfigured)
	wantCode(t, "comment with invalid UTF-8", k.src.Comment(ctx, free.ID, sources.Note{Author: "alice", Text: bad}), model.CodeMisconfigured)
	k.unchanged(t, heldBefore, "bad input")
	k.unchanged(t, freeBefore, "bad input")
	after, err := k.src.Poll(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Tasks) != len(before.Tasks) {
		t.Fatalf("bad input created tasks: %d before, %d after", len(before.Tasks), len(after.Tasks))
	}
	if n, m := len(k.get(t, free.ID).History), len(freeBefore.History); n != m {
		t.Fatalf("bad input left %d trail entries on the free task", n-m)
	}
}
