package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// taskJSON is a task in the ntask contract's shape (seed 002 names), plus
// what claimdeck adds.
type taskJSON struct {
	PageID      string `json:"page_id"`
	TaskID      string `json:"task_id"`
	Source      string `json:"source"`
	Title       string `json:"title"`
	Status      string `json:"status"`
	State       string `json:"state"`
	Priority    int    `json:"priority"`
	Class       string `json:"class"`
	ClaimedBy   string `json:"claimed_by"`
	Agent       string `json:"agent"`
	AgentRun    string `json:"agent_run"`
	Node        string `json:"node,omitempty"`
	LockToken   string `json:"lock_token"`
	LockExpires string `json:"lock_expires"`
	ClaimedAt   string `json:"claimed_at,omitempty"`
	Reason      string `json:"reason"`
	Artifacts   string `json:"artifacts,omitempty"`
	ReservedFor string `json:"reserved_for,omitempty"`
	ReservedTil string `json:"reserved_until,omitempty"`
	Parent      string `json:"parent,omitempty"`
	OpenSubs    int    `json:"open_subtasks,omitempty"`
	Version     string `json:"version,omitempty"`
	Problem     string `json:"problem,omitempty"`
	// The task's standing (model.Classify), in list and get.
	Level       string `json:"level,omitempty"`
	NodeDown    bool   `json:"node_down,omitempty"`
	StaleReason string `json:"stale_reason,omitempty"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func toJSON(t *model.Task) *taskJSON {
	if t == nil {
		return nil
	}
	return &taskJSON{
		PageID: t.ID, TaskID: t.DisplayKey(), Source: t.Source, Title: t.Title,
		Status: t.RawStatus, State: t.State.String(), Priority: t.Priority, Class: t.Class.String(),
		ClaimedBy: t.Claim.Holder.String(), Agent: t.Claim.Name, AgentRun: t.Claim.RunID, Node: t.Claim.Node,
		LockToken: t.Claim.Token, LockExpires: stamp(t.Claim.Expires), ClaimedAt: stamp(t.Claim.ClaimedAt),
		Reason: t.Reason, Artifacts: t.Artifacts,
		ReservedFor: t.Reservation.For, ReservedTil: stamp(t.Reservation.Until),
		Parent: t.Parent, OpenSubs: t.OpenSubtasks, Version: t.Version, Problem: t.Problem,
	}
}

// printer writes results as JSON (the default, for agents) or a table.
type printer struct {
	w     io.Writer
	table bool
	// classify, when set, adds each task's standing (list, get).
	classify func(*model.Task) model.Classification
}

func (p printer) toJSON(t *model.Task) *taskJSON {
	j := toJSON(t)
	if j != nil && p.classify != nil {
		c := p.classify(t)
		if c.Level != model.LevelNone {
			j.Level = c.Level.String()
		}
		j.NodeDown, j.StaleReason = c.Placement.Down, c.Reason
	}
	return j
}

func (p printer) task(t *model.Task) error {
	if p.table {
		if t == nil {
			_, err := fmt.Fprintln(p.w, "no task")
			return err
		}
		return p.tasks([]*model.Task{t})
	}
	return p.json(map[string]any{"ok": true, "task": p.toJSON(t)})
}

func (p printer) tasks(ts []*model.Task) error {
	if !p.table {
		out := make([]*taskJSON, len(ts))
		for i, t := range ts {
			out[i] = p.toJSON(t)
		}
		return p.json(map[string]any{"ok": true, "tasks": out})
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	header := "SOURCE\tID\tSTATE\tCLASS\tPRIO\tHOLDER\tEXPIRES\tTITLE"
	if p.classify != nil {
		header += "\tSTANDING"
	}
	fmt.Fprintln(tw, header)
	for _, t := range ts {
		holder := t.Claim.Name
		if t.Problem != "" {
			holder = "BROKEN: " + t.Problem
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", t.Source, t.DisplayKey(), t.State, t.Class,
			model.PriorityName(t.Priority), holder, stamp(t.Claim.Expires), oneLine(t.Title))
		if p.classify != nil {
			if c := p.classify(t); c.Stale() && c.Cause != model.CauseBroken {
				fmt.Fprintf(tw, "\t%s: %s", c.Level, c.Reason)
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func (p printer) json(v any) error {
	enc := json.NewEncoder(p.w)
	if p.table {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// fail prints an error in the contract's shape and returns its exit status.
func (p printer) fail(err error) int {
	code := model.CodeOf(err)
	msg := model.Redact(err.Error()) // not every error is a *model.Error
	if p.table {
		fmt.Fprintf(p.w, "error: %s\n", msg)
	} else {
		_ = p.json(map[string]any{"ok": false, "error": map[string]string{"code": string(code), "message": msg}})
	}
	return code.ExitStatus()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}
