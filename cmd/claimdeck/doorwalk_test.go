package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// door applies a reviewer's action (approve or rework) to a task at one
// door and answers the error code ("" when applied).
type door struct {
	name      string
	actor     string
	kind      model.Door
	apply     func(action model.Action, id, reason string) string
	withoutOp bool // the door does not offer the action at all
}

// Every reviewer action through every door: the same need (rework without
// a reason is refused, MISCONFIGURED, changing nothing), the same answer
// when given, and the same record: the audit log names the actor and the
// door each came through. The agent_only HTTP client is not offered them.
func TestEveryDoorAppliesTheSameRules(t *testing.T) {
	r := newDoorRig(t, sqliteSource, "")
	ctx := context.Background()
	home := t.TempDir()
	mcpDoor := func(cs *mcp.ClientSession) func(model.Action, string, string) string {
		return func(a model.Action, id, reason string) string {
			args := map[string]any{"task": id}
			if reason != "" {
				args["reason"] = reason
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: string(a), Arguments: args})
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
	doors := []door{
		{name: "claimdeck", actor: "alice", kind: model.DoorCLI, apply: func(a model.Action, id, reason string) string {
			args := []string{string(a), "--task", id, "--yes"}
			if reason != "" {
				args = append(args, "--reason", reason)
			}
			want := 0
			res := r.claimdeckAny(&want, args...)
			return res.Error.Code
		}},
		{name: "ntask", actor: "reviewer-7", kind: model.DoorNtask, apply: func(a model.Action, id, reason string) string {
			args := []string{string(a), id}
			if reason != "" {
				args = append(args, "--reason", reason)
			}
			v, code := r.ntaskAs("reviewer-7", home, args...)
			if code == 0 {
				return ""
			}
			return v["error"].(map[string]any)["code"].(string)
		}},
		{name: "mcp stdio", actor: "alice", kind: model.DoorMCPStdio, apply: mcpDoor(r.stdio())},
		{name: "mcp http full", actor: "oncall@mcp-http", kind: model.DoorMCPHTTP, apply: mcpDoor(r.http(oncallToken))},
		{name: "mcp http agent_only", withoutOp: true, apply: mcpDoor(r.http(botToken))},
		{name: "dashboard", actor: "alice", kind: model.DoorDashboard, apply: func(a model.Action, id, reason string) string {
			sc, _ := pickSource(cfg, "")
			src, err := openSource(ctx, cfg, sc, false)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			seen, err := src.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			_, err = dashboard.Apply(ctx, src, sources.Request{Action: a, Seen: seen, Reason: reason})
			return string(model.CodeOf(err))
		}},
	}
	inReview := func(title string) string {
		id := r.claimdeck(0, "create", "--title", title).Task.PageID
		tok := r.claimdeck(0, "claim", "--task", id, "--agent-name", "worker-1").Task.LockToken
		r.claimdeck(0, "review", "--task", id, "--lock-token", tok, "--agent-name", "worker-1")
		return id
	}
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			id := inReview("through " + d.name)
			if d.withoutOp {
				for _, a := range []model.Action{model.ActionApprove, model.ActionRework} {
					if code := d.apply(a, id, "x"); code == "" {
						t.Fatalf("%s is applied through %s", a, d.name)
					}
				}
				return
			}
			if code := d.apply(model.ActionRework, id, ""); code != string(model.CodeMisconfigured) {
				t.Fatalf("rework without a reason: %q, want MISCONFIGURED", code)
			}
			if got := r.claimdeck(0, "get", "--task", id).Task; got.State != "review" {
				t.Fatalf("the refused rework moved the task: %+v", got)
			}
			for _, step := range []struct {
				action model.Action
				reason string
				state  string
			}{{model.ActionRework, "add tests", "queued"}, {model.ActionApprove, "", "done"}} {
				if step.action == model.ActionApprove {
					tok := r.claimdeck(0, "claim", "--task", id, "--agent-name", "worker-1").Task.LockToken
					r.claimdeck(0, "review", "--task", id, "--lock-token", tok, "--agent-name", "worker-1")
				}
				if code := d.apply(step.action, id, step.reason); code != "" {
					t.Fatalf("%s: %s", step.action, code)
				}
				if got := r.claimdeck(0, "get", "--task", id).Task; got.State != step.state {
					t.Fatalf("after %s: %+v", step.action, got)
				}
				recs := r.audit()
				last := recs[len(recs)-1]
				if last["action"] != string(step.action) || last["actor"] != d.actor || last["door"] != string(d.kind) || last["result"] != "applied" {
					t.Fatalf("the audit log's last record after %s: %v, want actor %s door %s", step.action, last, d.actor, d.kind)
				}
			}
		})
	}
}
