package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// doorCall is one action asked at a door, with what it was given.
type doorCall struct {
	action     model.Action
	id, reason string
	to         string // the hand-off's target
}

// refusal is a door's answer to a call: the error code ("" when applied)
// and its message.
type refusal struct{ code, message string }

// door applies an action to a task at one door and answers its refusal.
type door struct {
	name   string
	actor  string
	kind   model.Door
	apply  func(doorCall) refusal
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
// door, on SQLite and on a lock directory: the same need (a missing reason
// or target is refused, MISCONFIGURED, changing nothing, in words that name
// what is missing, and never a command-line flag to an MCP client), and
// the same record: the audit log
// names the actor and the door each came through, the trail the actor. A
// door that does not offer an action refuses it and changes nothing: the
// person's own claim is finished without its token only at the dashboard
// and the claimdeck command, and the agent_only HTTP client is offered no
// override.
func TestEveryDoorAppliesTheSameRules(t *testing.T) {
	for _, b := range []struct{ name, yaml string }{
		{"sqlite", cmdtest.SQLiteSource},
		{"lockdir", "  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n"},
	} {
		t.Run(b.name, func(t *testing.T) { walkDoors(t, newDoorRig(t, b.yaml, "")) })
	}
}

func walkDoors(t *testing.T, r *doorRig) {
	ctx := context.Background()
	home := t.TempDir()
	// caller is the agent_name a reviewer's tool names its caller by on
	// stdio; over HTTP the client's name is the caller.
	mcpDoor := func(cs *mcp.ClientSession, caller string) func(doorCall) refusal {
		return func(c doorCall) refusal {
			args := map[string]any{"task": c.id}
			if c.reason != "" {
				args["reason"] = c.reason
			}
			if c.to != "" {
				args["agent_name"] = c.to
			}
			if cmdutil.HumanOpOf(c.action).Caller && caller != "" {
				args["agent_name"] = caller
			}
			tool := string(c.action) // an agent tool of that name, if any
			if op := cmdutil.HumanOpOf(c.action); op.Mcp {
				tool = op.Tool()
			}
			if c.action == model.ActionCancel {
				args["force"] = true // the operator's cancel: the agent tool cancel with force
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return refusal{code: "not offered", message: err.Error()} // a tool the client is not given
			}
			if !res.IsError {
				return refusal{}
			}
			var out cmdtest.Result
			text := res.Content[0].(*mcp.TextContent).Text
			if err := jsonUnmarshal(text, &out); err != nil {
				t.Fatal(err)
			}
			return refusal{out.Error.Code, out.Error.Message}
		}
	}
	cfg, err := cmdutil.LoadConfig(r.c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	j, err := sources.OpenJournal(filepath.Join(r.c.Dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	dashboard := &sources.Desk{Actor: "alice", Door: model.DoorDashboard, Journal: j}
	// The walk's setup and reads go through the source in this process:
	// only the action under test crosses a door, so a lane starts one
	// process per action instead of seven (each a second under -race).
	sc, _ := cmdutil.PickSource(cfg, "")
	src, err := cmdutil.OpenSource(ctx, cfg, sc, false)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	l := &lane{t: t, r: r, src: src, person: &sources.Desk{Actor: "alice", Door: model.DoorCLI, Journal: j}}
	mcpRelease := map[model.Action]model.Action{model.ActionRelease: model.ActionForceRelease}
	overrides := []model.Action{model.ActionTakeover, model.ActionForceRelease, model.ActionHandoff, model.ActionCancel, model.ActionApprove, model.ActionRework, model.ActionUnblock}
	doors := []door{
		{name: "claimdeck", actor: "alice", kind: model.DoorCLI, offers: offering(model.HumanActions...), apply: func(c doorCall) refusal {
			var args []string
			switch c.action {
			case model.ActionForceRelease:
				args = []string{"release", "--force", "--yes"}
			case model.ActionCancel:
				args = []string{"cancel", "--force", "--yes"}
			case model.ActionComplete, model.ActionReview, model.ActionBlock:
				// The person's own claim, without its token: asked at a
				// terminal (Needs.Confirm), run here with none, as a script.
				args = []string{string(c.action)}
			case model.ActionRelease:
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
			e := r.claimdeckAny(&code, args...).Error
			return refusal{e.Code, e.Message}
		}},
		{name: "ntask", actor: "reviewer-7", kind: model.DoorNtask,
			offers: offering(model.ActionCancel, model.ActionApprove, model.ActionRework, model.ActionUnblock),
			apply: func(c doorCall) refusal {
				args := []string{string(c.action), c.id}
				if c.reason != "" {
					args = append(args, "--reason", c.reason)
				}
				v, code := r.ntaskAs("reviewer-7", home, args...)
				if code == 0 {
					return refusal{}
				}
				e := v["error"].(map[string]any)
				return refusal{e["code"].(string), e["message"].(string)}
			}},
		// MCP's release tool is the force-release: a person's claim
		// released there is force-released, audited under the caller, never
		// the person's own release (a design question: the one name).
		{name: "mcp stdio", actor: "alice", kind: model.DoorMCPStdio, offers: offering(append(overrides, model.ActionRelease)...), as: mcpRelease, apply: mcpDoor(r.stdio(), "alice")},
		{name: "mcp http full", actor: "oncall@mcp-http", kind: model.DoorMCPHTTP, offers: offering(append(overrides, model.ActionRelease)...), as: mcpRelease, apply: mcpDoor(r.http(cmdtest.OncallToken), "")},
		{name: "mcp http agent_only", kind: model.DoorMCPHTTP, offers: offering(), apply: mcpDoor(r.http(cmdtest.BotToken), "")},
		{name: "dashboard", actor: "alice", kind: model.DoorDashboard, offers: offering(model.HumanActions...), apply: func(c doorCall) refusal {
			sc, _ := cmdutil.PickSource(cfg, "")
			src, err := cmdutil.OpenSource(ctx, cfg, sc, false)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			seen, err := src.Get(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			_, err = dashboard.Apply(ctx, src, sources.Request{Action: c.action, Seen: seen, Reason: c.reason, To: c.to})
			if err == nil {
				return refusal{}
			}
			return refusal{string(model.CodeOf(err)), err.Error()}
		}},
	}
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) { l.t = t; walkDoor(t, l, d) })
	}
}

// doorStep is one action as the door walk applies it: the state it applies
// to, what it needs (the refusal when that is missing), and the state after.
type doorStep struct {
	action model.Action
	setup  func(l *lane, title string) string
	need   string // "reason" or "target": refused MISCONFIGURED without it, in words that name it
	reason string
	to     string
	state  string
}

// lane is one backend's door walk: its source, opened in the test's own
// process for the setup and the reads, and the person (alice at the
// claimdeck command) whose own claims the walk finishes.
type lane struct {
	t      *testing.T
	r      *doorRig
	src    sources.Source
	person *sources.Desk
}

// create adds a queued task and answers its id.
func (l *lane) create(title string) string {
	l.t.Helper()
	task, err := l.src.Create(context.Background(), sources.NewTask{Title: title})
	if err != nil {
		l.t.Fatal(err)
	}
	return task.ID
}

// claim claims id as worker-1 and answers its lock token.
func (l *lane) claim(id string) string {
	l.t.Helper()
	task, err := l.src.Claim(context.Background(), id, sources.ClaimRequest{Agent: "worker-1"})
	if err != nil {
		l.t.Fatal(err)
	}
	return task.Claim().Token
}

// finish ends worker-1's claim of id as o says.
func (l *lane) finish(id, token string, o sources.Outcome) {
	l.t.Helper()
	o.Writer = "worker-1"
	if _, err := l.src.Finish(context.Background(), id, token, o); err != nil {
		l.t.Fatal(err)
	}
}

// get reads id as `claimdeck get` prints it.
func (l *lane) get(id string) *cmdutil.TaskJSON {
	l.t.Helper()
	task, err := l.src.Get(context.Background(), id)
	if err != nil {
		l.t.Fatal(err)
	}
	return cmdutil.Printer{}.ToJSON(task)
}

// doorSteps are model.HumanActions, in order, each from the state it applies to.
func doorSteps() []doorStep {
	claimed := func(l *lane, title string) string {
		id := l.create(title)
		l.claim(id)
		return id
	}
	queued := func(l *lane, title string) string { return l.create(title) }
	review := func(l *lane, title string) string {
		id := l.create(title)
		l.finish(id, l.claim(id), sources.Outcome{State: model.StateReview})
		return id
	}
	blocked := func(l *lane, title string) string {
		id := l.create(title)
		l.finish(id, l.claim(id), sources.Outcome{State: model.StateBlocked, Reason: "needs keys", UnblockAction: "give keys"})
		return id
	}
	// own is a person's own claim: alice took it over first.
	own := func(l *lane, title string) string {
		id := claimed(l, title)
		seen, err := l.src.Get(context.Background(), id)
		if err != nil {
			l.t.Fatal(err)
		}
		if _, err := l.person.Apply(context.Background(), l.src, sources.Request{Action: model.ActionTakeover, Seen: seen}); err != nil {
			l.t.Fatal(err)
		}
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
// refused without what it needs (MISCONFIGURED, the task unchanged, the
// message naming what is missing), then applied, and the audit log and
// the trail name the door's actor; one it does not offer is refused and
// changes nothing. No refusal at an MCP door names a command-line flag.
func walkDoor(t *testing.T, l *lane, d door) {
	r := l.r
	mcpDoor := d.kind == model.DoorMCPStdio || d.kind == model.DoorMCPHTTP
	apply := func(c doorCall) refusal {
		got := d.apply(c)
		if mcpDoor && cmdtest.CliFlag.MatchString(got.message) {
			t.Errorf("%s at %s names a command-line flag to an MCP client: %q", c.action, d.name, got.message)
		}
		return got
	}
	for _, w := range doorSteps() {
		id := w.setup(l, string(w.action)+" through "+d.name)
		before := l.get(id)
		if !d.offers[w.action] {
			if got := apply(doorCall{action: w.action, id: id, reason: w.reason, to: w.to}); got.code == "" {
				t.Errorf("%s is applied through %s, which does not offer it", w.action, d.name)
			} else if got := l.get(id); got.State != before.State || got.ClaimedBy != before.ClaimedBy {
				t.Errorf("the refused %s moved the task: %+v", w.action, got)
			}
			continue
		}
		if w.need != "" {
			if got := apply(doorCall{action: w.action, id: id}); got.code != string(model.CodeMisconfigured) || !strings.Contains(got.message, w.need) {
				t.Errorf("%s without its %s: %q %q, want MISCONFIGURED naming the %s", w.action, w.need, got.code, got.message, w.need)
			}
			if got := l.get(id); got.State != before.State {
				t.Errorf("the refused %s moved the task: %+v", w.action, got)
			}
		}
		if got := apply(doorCall{action: w.action, id: id, reason: w.reason, to: w.to}); got.code != "" {
			t.Errorf("%s: %s %s", w.action, got.code, got.message)
			continue
		}
		got := l.get(id)
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
