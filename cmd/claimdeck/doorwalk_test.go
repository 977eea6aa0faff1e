package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// doorCall is one action asked at a door, with what it was given.
type doorCall struct {
	action     model.Action
	id, reason string
	to         string // the hand-off's target
}

// door applies an action to a task at one door and answers the error
// code ("" when applied).
type door struct {
	name   string
	actor  string
	kind   model.Door
	apply  func(doorCall) string
	offers map[model.Action]bool // per docs/doors.md
	// as is the action the audit log records for one asked under
	// another name, where they differ.
	as map[model.Action]model.Action
}

// offering is the set of actions a door offers.
func offering(actions ...model.Action) map[model.Action]bool {
	out := map[model.Action]bool{}
	for _, a := range actions {
		out[a] = true
	}
	return out
}

// Every human and reviewer action (model.HumanActions) through every
// door: the same need (a missing reason or target is refused,
// MISCONFIGURED, changing nothing), and the same record: the audit log
// names the actor and the door each came through, the trail the actor. A
// door that does not offer an action refuses it and changes nothing: the
// person's own claim is finished without its token only at the dashboard
// and the claimdeck command, and the agent_only HTTP client is offered no
// override.
func TestEveryDoorAppliesTheSameRules(t *testing.T) {
	r := newDoorRig(t, sqliteSource, "")
	ctx := context.Background()
	home := t.TempDir()
	mcpDoor := func(cs *mcp.ClientSession) func(doorCall) string {
		return func(c doorCall) string {
			args := map[string]any{"task": c.id}
			if c.reason != "" {
				args["reason"] = c.reason
			}
			if c.to != "" {
				args["agent_name"] = c.to
			}
			tool := string(c.action) // an agent tool of that name, if any
			if op := humanOpOf(c.action); op.mcp {
				tool = op.tool()
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return "not offered: " + err.Error() // a tool the client is not given
			}
			if !res.IsError {
				return ""
			}
			var out result
			text := res.Content[0].(*mcp.TextContent).Text
			if err := jsonUnmarshal(text, &out); err != nil {
				t.Fatal(err)
			}
			return out.Error.Code
		}
	}
	cfg, err := loadConfig(r.c.conf)
	if err != nil {
		t.Fatal(err)
	}
	j, err := sources.OpenJournal(filepath.Join(r.c.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	dashboard := &sources.Desk{Actor: "alice", Door: model.DoorDashboard, Journal: j}
	mcpRelease := map[model.Action]model.Action{model.ActionRelease: model.ActionForceRelease}
	overrides := []model.Action{model.ActionTakeover, model.ActionForceRelease, model.ActionHandoff, model.ActionApprove, model.ActionRework}
	doors := []door{
		{name: "claimdeck", actor: "alice", kind: model.DoorCLI, offers: offering(model.HumanActions...), apply: func(c doorCall) string {
			var args []string
			switch c.action {
			case model.ActionForceRelease:
				args = []string{"release", "--force", "--yes"}
			case model.ActionCancel:
				args = []string{"cancel", "--force", "--yes"}
			case model.ActionComplete, model.ActionReview, model.ActionBlock:
				args = []string{string(c.action)} // the person's own claim, without its token
			case model.ActionRelease:
				// The own release asks for confirmation (Needs.Confirm);
				// the own complete, review and block, agent commands that
				// finish a person's claim, do not: a design question.
				args = []string{"release", "--yes"}
			default:
				args = []string{string(c.action), "--yes"}
			}
			args = append(args, "--task", c.id)
			if c.reason != "" {
				args = append(args, "--reason", c.reason)
			}
			if c.to != "" {
				args = append(args, "--to", c.to)
			}
			var code int
			return r.claimdeckAny(&code, args...).Error.Code
		}},
		{name: "ntask", actor: "reviewer-7", kind: model.DoorNtask,
			offers: offering(model.ActionCancel, model.ActionApprove, model.ActionRework, model.ActionUnblock),
			apply: func(c doorCall) string {
				args := []string{string(c.action), c.id}
				if c.reason != "" {
					args = append(args, "--reason", c.reason)
				}
				v, code := r.ntaskAs("reviewer-7", home, args...)
				if code == 0 {
					return ""
				}
				return v["error"].(map[string]any)["code"].(string)
			}},
		// MCP's release tool is the force-release: a person's claim
		// released there is force-released, audited under the caller, never
		// the person's own release (a design question: the one name).
		{name: "mcp stdio", actor: "alice", kind: model.DoorMCPStdio, offers: offering(append(overrides, model.ActionRelease)...), as: mcpRelease, apply: mcpDoor(r.stdio())},
		{name: "mcp http full", actor: "oncall@mcp-http", kind: model.DoorMCPHTTP, offers: offering(append(overrides, model.ActionRelease)...), as: mcpRelease, apply: mcpDoor(r.http(oncallToken))},
		{name: "mcp http agent_only", kind: model.DoorMCPHTTP, offers: offering(), apply: mcpDoor(r.http(botToken))},
		{name: "dashboard", actor: "alice", kind: model.DoorDashboard, offers: offering(model.HumanActions...), apply: func(c doorCall) string {
			sc, _ := pickSource(cfg, "")
			src, err := openSource(ctx, cfg, sc, false)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			seen, err := src.Get(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			_, err = dashboard.Apply(ctx, src, sources.Request{Action: c.action, Seen: seen, Reason: c.reason, To: c.to})
			return string(model.CodeOf(err))
		}},
	}
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) { walkDoor(t, r, d) })
	}
}

// doorStep is one action as the door walk applies it: the state it applies
// to, what it needs (the refusal when that is missing), and the state after.
type doorStep struct {
	action model.Action
	setup  func(r *doorRig, title, actor string) string
	need   string // "reason" or "target": refused MISCONFIGURED without it
	reason string
	to     string
	state  string
}

// doorSteps are model.HumanActions, in order, each from the state it applies to.
func doorSteps() []doorStep {
	claimed := func(r *doorRig, title, _ string) string {
		id := r.claimdeck(0, "create", "--title", title).Task.PageID
		r.claimdeck(0, "claim", "--task", id, "--agent-name", "worker-1")
		return id
	}
	queued := func(r *doorRig, title, _ string) string {
		return r.claimdeck(0, "create", "--title", title).Task.PageID
	}
	review := func(r *doorRig, title, _ string) string {
		id := r.claimdeck(0, "create", "--title", title).Task.PageID
		tok := r.claimdeck(0, "claim", "--task", id, "--agent-name", "worker-1").Task.LockToken
		r.claimdeck(0, "review", "--task", id, "--lock-token", tok, "--agent-name", "worker-1")
		return id
	}
	blocked := func(r *doorRig, title, _ string) string {
		id := r.claimdeck(0, "create", "--title", title).Task.PageID
		tok := r.claimdeck(0, "claim", "--task", id, "--agent-name", "worker-1").Task.LockToken
		r.claimdeck(0, "block", "--task", id, "--lock-token", tok, "--agent-name", "worker-1", "--reason", "needs keys", "--unblock-action", "give keys")
		return id
	}
	// own is a person's own claim: the door's actor took it over first.
	own := func(r *doorRig, title, _ string) string {
		id := claimed(r, title, "")
		r.claimdeck(0, "takeover", "--task", id, "--yes")
		return id
	}
	return []doorStep{
		{action: model.ActionTakeover, setup: claimed, state: "claimed"},
		{action: model.ActionForceRelease, setup: claimed, state: "queued"},
		{action: model.ActionHandoff, setup: claimed, need: "target", to: "worker-2", state: "queued"},
		{action: model.ActionCancel, setup: queued, need: "reason", reason: "not needed", state: "canceled"},
		{action: model.ActionApprove, setup: review, state: "done"},
		{action: model.ActionRework, setup: review, need: "reason", reason: "add tests", state: "queued"},
		{action: model.ActionUnblock, setup: blocked, state: "queued"},
		{action: model.ActionComplete, setup: own, state: "done"},
		{action: model.ActionReview, setup: own, state: "review"},
		{action: model.ActionBlock, setup: own, need: "reason", reason: "waiting on legal", state: "blocked"},
		{action: model.ActionRelease, setup: own, state: "queued"},
	}
}

// walkDoor applies every action at one door: an action the door offers is
// refused without what it needs (MISCONFIGURED, the task unchanged), then
// applied, and the audit log and the trail name the door's actor; one it
// does not offer is refused and changes nothing.
func walkDoor(t *testing.T, r *doorRig, d door) {
	for _, w := range doorSteps() {
		id := w.setup(r, string(w.action)+" through "+d.name, d.actor)
		before := r.claimdeck(0, "get", "--task", id).Task
		if !d.offers[w.action] {
			if code := d.apply(doorCall{action: w.action, id: id, reason: w.reason, to: w.to}); code == "" {
				t.Errorf("%s is applied through %s, which does not offer it", w.action, d.name)
			} else if got := r.claimdeck(0, "get", "--task", id).Task; got.State != before.State || got.ClaimedBy != before.ClaimedBy {
				t.Errorf("the refused %s moved the task: %+v", w.action, got)
			}
			continue
		}
		if w.need != "" {
			if code := d.apply(doorCall{action: w.action, id: id}); code != string(model.CodeMisconfigured) {
				t.Errorf("%s without its %s: %q, want MISCONFIGURED", w.action, w.need, code)
			}
			if got := r.claimdeck(0, "get", "--task", id).Task; got.State != before.State {
				t.Errorf("the refused %s moved the task: %+v", w.action, got)
			}
		}
		if code := d.apply(doorCall{action: w.action, id: id, reason: w.reason, to: w.to}); code != "" {
			t.Errorf("%s: %s", w.action, code)
			continue
		}
		got := r.claimdeck(0, "get", "--task", id).Task
		if got.State != w.state {
			t.Errorf("after %s: state %s, want %s", w.action, got.State, w.state)
		}
		recorded := w.action
		if as, ok := d.as[w.action]; ok {
			recorded = as
		}
		recs := r.audit()
		last := recs[len(recs)-1]
		if last["action"] != string(recorded) || last["actor"] != d.actor || last["door"] != string(d.kind) || last["result"] != "applied" {
			t.Errorf("the audit log's last record after %s: %v, want actor %s door %s", w.action, last, d.actor, d.kind)
		}
		if h := got.History; len(h) == 0 || !strings.Contains(h[len(h)-1].Actor, d.actor) {
			t.Errorf("the trail's last line after %s: %+v, want actor %s", w.action, h, d.actor)
		}
	}
}
