package sourcetest

import (
	"strconv"
	"strings"
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
	tok := k.claim(t, held.ID, "holder").Claim().Token
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
		{"hand-off to HUMAN:bob", func() error {
			_, err := k.src.Handoff(ctx, held.ID, sources.Handoff{Token: tok, To: "HUMAN:bob", Human: sources.Human{Actor: "holder"}})
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
		// Over the limits every backend can read back: refused before a
		// write, not stored where another backend (or a lock file reader)
		// could not read it.
		{"create with a title over 1 MiB", func() error {
			_, err := k.src.Create(ctx, sources.NewTask{Title: strings.Repeat("t", 1<<20+1)})
			return err
		}},
		{"create with a description over the limit", func() error {
			_, err := k.src.Create(ctx, sources.NewTask{Title: "ok", Description: strings.Repeat("d", model.MaxDescription+1)})
			return err
		}},
		{"complete with artifacts over the limit", func() error {
			_, err := k.src.Finish(ctx, held.ID, tok, sources.Outcome{State: model.StateDone, Artifacts: strings.Repeat("a", model.MaxArtifacts+1)})
			return err
		}},
		{"block with a reason over the limit", func() error {
			_, err := k.src.Finish(ctx, held.ID, tok, sources.Outcome{State: model.StateBlocked, Reason: strings.Repeat("r", model.MaxReason+1)})
			return err
		}},
		{"takeover with a reason over the limit", func() error {
			_, err := k.src.Takeover(ctx, held.ID, sources.Human{Actor: "alice", Reason: strings.Repeat("r", model.MaxReason+1), Expect: heldBefore.Version})
			return err
		}},
	} {
		wantCode(t, c.what, c.try(), model.CodeMisconfigured)
	}
	// Names a caller may not take (model.CheckCallerName): a person's
	// HUMAN:, a remote client's @mcp-http, invisible characters.
	for _, name := range []string{"HUMAN:alice", "human:alice", "oncall@mcp-http", "SAND\u200bMAN", "\ufeffSANDMAN", "SAND\u202eNAM"} {
		_, err := k.src.Claim(ctx, free.ID, sources.ClaimRequest{Agent: name})
		wantCode(t, "claim as "+strconv.Quote(name), err, model.CodeMisconfigured)
		_, err = k.src.ClaimNext(ctx, sources.ClaimRequest{Agent: name})
		wantCode(t, "claim-next as "+strconv.Quote(name), err, model.CodeMisconfigured)
	}
	long := strings.Repeat("t", model.MaxTitle+1)
	_, err = k.src.Update(ctx, free.ID, sources.Edit{Actor: "alice", Title: &long})
	wantCode(t, "update with a title over the limit", err, model.CodeMisconfigured)
	wantCode(t, "comment over the limit", k.src.Comment(ctx, free.ID, sources.Note{Author: "alice", Text: strings.Repeat("c", model.MaxComment+1)}), model.CodeMisconfigured)
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
	if n, m := len(k.get(t, free.ID).More().History), len(freeBefore.More().History); n != m {
		t.Fatalf("bad input left %d trail entries on the free task", n-m)
	}
}

// testTextsAtTheirLimits: a task whose texts are each at its limit is
// created, claimed, heartbeated and finished, and read back whole at every
// step, on every backend.
func testTextsAtTheirLimits(t *testing.T, k *kit) {
	ctx := k.ctx(t)
	// Characters JSON escapes (<, >, &) and several-byte ones: the limit
	// is in bytes, and a file backend must still read its own file back.
	fill := func(n int) string {
		const unit = "<é&>"
		return strings.Repeat(unit, n/len(unit)) + strings.Repeat("x", n%len(unit))
	}
	title, desc := fill(model.MaxTitle), fill(model.MaxDescription)
	task := k.create(t, sources.NewTask{Title: title, Description: desc})
	if got := k.get(t, task.ID); got.Title != title || got.Description != desc {
		t.Fatalf("created: title %d bytes, description %d bytes; want %d and %d", len(got.Title), len(got.Description), len(title), len(desc))
	}
	tok := k.claim(t, task.ID, "holder").Claim().Token
	if _, err := k.src.Heartbeat(ctx, task.ID, tok, 0); err != nil {
		t.Fatalf("heartbeat of a task with texts at their limits: %v", err)
	}
	reason, artifacts := fill(model.MaxReason), fill(model.MaxArtifacts)
	if _, err := k.src.Finish(ctx, task.ID, tok, sources.Outcome{State: model.StateDone, Artifacts: artifacts}); err != nil {
		t.Fatalf("complete with artifacts at their limit: %v", err)
	}
	if got := k.get(t, task.ID); got.State != model.StateDone || got.Title != title || got.More().Artifacts != artifacts {
		t.Fatalf("after complete: %s, title %d bytes, artifacts %d", got.State, len(got.Title), len(got.More().Artifacts))
	}
	other := k.create(t, sources.NewTask{Title: title})
	tok = k.claim(t, other.ID, "holder").Claim().Token
	if _, err := k.src.Finish(ctx, other.ID, tok, sources.Outcome{State: model.StateBlocked, Reason: reason, UnblockAction: reason}); err != nil {
		t.Fatalf("block with a reason at its limit: %v", err)
	}
	if got := k.get(t, other.ID); got.State != model.StateBlocked || got.More().Reason != reason {
		t.Fatalf("after block: %s, reason %d bytes", got.State, len(got.More().Reason))
	}
}
