package mcpdoor

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
)

// What `claimdeck mcp` tells a client about each tool beyond its name and
// summary: a description of every argument, the tool's hints, and the
// schema of its structured result. Kept here, keyed by tool and argument
// name, and applied by documented where the tools are built.

// argDocs describes each argument by its flag name, for every tool that
// takes it; toolArgDocs overrides one argument of one tool ("tool.flag").
var argDocs = map[string]string{
	"task":           "the task's id, as next, list, claim or create printed it (page_id)",
	"agent-name":     "the agent's name, e.g. CODEX-1: the claim's holder",
	"run-id":         "the agent run this claim belongs to, kept on the claim and in the task's trail",
	"lock-token":     "the lock token claim returned (the whole token): the proof that the caller still holds the claim",
	"lease":          "how long the claim holds without a heartbeat: a duration such as 20m (default: the configured lease)",
	"reason":         "why, kept in the task's trail",
	"unblock-action": "what would unblock the task, e.g. 'needs the staging credentials'",
	"next-check-at":  "when to look at the task again: an RFC 3339 time such as 2026-02-01T09:00:00Z",
	"artifacts":      "what the work produced: links or notes, e.g. a pull request's URL",
	"status":         "READY, IN_PROGRESS, BLOCKED, REVIEW, DONE, FAILED or CANCELED",
	"title":          "the task's title",
	"priority":       "a number (higher = more urgent) or critical, high, medium, low",
	"class":          "the class of service: EXPEDITE, FIXED_DATE, STANDARD (the default) or INTANGIBLE",
	"description":    "the task's description, free text",
	"parent":         "the id of the task this one is a sub-task of",
	"body":           "the comment's text",
}

// expectToken is an override's lock_token: the CLI's --expect-token.
const expectToken = "the token the operator expects the claim to hold (the whole token or its shown prefix); " +
	"refused if the claim changed since it was read"

var toolArgDocs = map[string]string{
	"next.agent-name":     "the agent asking: a task reserved for another agent is skipped",
	"claim.task":          "the task to claim; without it, the first task eligible for agent_name",
	"comment.agent-name":  "who writes the comment (default: the configured actor)",
	"block.reason":        "why the task is blocked (required)",
	"fail.reason":         "why the task failed",
	"cancel.reason":       "why the task is canceled (required)",
	"list.status":         "only the tasks in this status: " + argDocs["status"],
	"update.status":       "the new status: " + argDocs["status"],
	"update.title":        "the new title",
	"update.priority":     "the new priority: " + argDocs["priority"],
	"update.class":        "the new class: EXPEDITE, FIXED_DATE, STANDARD or INTANGIBLE",
	"update.lock-token":   "the holder's lock token: required to edit a claimed task",
	"update.reason":       "why the task changes, kept in its trail",
	"takeover.reason":     "why the operator takes the task (optional; kept in the trail)",
	"takeover.lock-token": expectToken,
	"release.reason":      "why the claim is released (optional; kept in the trail)",
	"release.lock-token":  expectToken,
	"handoff.reason":      "why the task is handed off (optional; kept in the trail)",
	"handoff.lock-token":  expectToken,
	"handoff.agent-name":  "the agent the task is reserved for, or ANY",
	"handoff.priority":    "a new priority for the task: " + argDocs["priority"],
	"approve.reason":      "a note kept with the approval (optional)",
	"approve.agent-name":  "who approves: your name (required on stdio; over HTTP the client's name is used); refused if you sent the task to review",
	"rework.reason":       "what to change (required)",
	"rework.agent-name":   "who sends the task back: your name (required on stdio; over HTTP the client's name is used)",
	"unblock.reason":      "a note kept with the unblock (optional)",
	"cancel.force":        "true: cancel as an operator, whoever holds the task (reason required; audited), lock_token then the token expected; false or absent: the holder's cancel",
}

// argDoc is the description of one argument of one tool.
func argDoc(tool, flag string) string {
	if d, ok := toolArgDocs[tool+"."+flag]; ok {
		return d
	}
	return argDocs[flag]
}

// hint is a tool's annotations: read-only; destructive (it ends a claim,
// writes a final status or overwrites what another wrote; else it only
// adds); idempotent (a repeat with the same arguments changes nothing
// more: a spent lock token is refused as LOST_LOCK). No tool reaches
// beyond the configured task sources.
func hint(readOnly, destructive, idempotent bool) mcp.ToolAnnotations {
	closed := false
	return mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &closed}
}

var toolHints = map[string]mcp.ToolAnnotations{
	"next": hint(true, false, true),
	"get":  hint(true, false, true),
	"list": hint(true, false, true),
	// claim takes a new lease each time; create and comment add each time.
	"claim":   hint(false, false, false),
	"create":  hint(false, false, false),
	"comment": hint(false, false, false),
	// A heartbeat sets the expiry from now: a repeat changes nothing more.
	"heartbeat": hint(false, false, true),
	// The holder's ways out end the claim.
	"complete": hint(false, true, true),
	"block":    hint(false, true, true),
	"review":   hint(false, true, true),
	"fail":     hint(false, true, true),
	"cancel":   hint(false, true, true),
	"update":   hint(false, true, true),
	// Operator tools: each ends or changes another's claim or review.
	"takeover": hint(false, true, false),
	"release":  hint(false, true, false),
	"handoff":  hint(false, true, false),
	"approve":  hint(false, true, true),
	"rework":   hint(false, true, true),
	"unblock":  hint(false, true, true),
}

// answerKinds names the tools whose answer is a list; every other tool
// answers one task (or none: next with nothing eligible).
var answerKinds = map[string]string{"list": "tasks"}

// outputSchema is the schema of a tool's structured content: the CLI's
// JSON, {"ok": true, "task": …} or {"ok": true, "tasks": […]}, or, with
// isError, {"ok": false, "error": {"code", "message"}}. The task's schema
// is inferred from the type the CLI prints, so the two cannot drift.
func outputSchema(tool string) *jsonschema.Schema {
	task, err := jsonschema.For[cmdutil.TaskJSON](nil)
	if err != nil {
		panic(fmt.Sprintf("the schema of a task: %v", err))
	}
	props := map[string]*jsonschema.Schema{
		"ok": {Type: "boolean", Description: "false with isError: then error says why"},
		"error": {Type: "object", Required: []string{"code", "message"}, Properties: map[string]*jsonschema.Schema{
			"code":    {Type: "string", Description: "the contract's error code, CONFLICT, LOST_LOCK, MISCONFIGURED, API_ERROR, INCOMPLETE_SUBTASKS or NO_TASKS"},
			"message": {Type: "string"},
		}},
	}
	if answerKinds[tool] == "tasks" {
		props["tasks"] = &jsonschema.Schema{Type: "array", Items: task, Description: "the tasks, in pull order"}
	} else {
		task.Type, task.Types = "", []string{"null", "object"}
		props["task"] = task
	}
	return &jsonschema.Schema{Type: "object", Required: []string{"ok"}, Properties: props, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
}

// documented is the tool with its arguments described, its annotations
// and its output schema.
func documented(t *mcp.Tool) *mcp.Tool {
	if props, ok := t.InputSchema.(map[string]any)["properties"].(map[string]any); ok {
		for name, p := range props {
			p.(map[string]any)["description"] = argDoc(t.Name, strings.ReplaceAll(name, "_", "-"))
		}
	}
	if h, ok := toolHints[t.Name]; ok {
		t.Annotations = &h
	}
	t.OutputSchema = outputSchema(t.Name)
	return t
}
