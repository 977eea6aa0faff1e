package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/theme"
)

// taskJSON is a task in the ntask contract's shape (seed 002 names), plus
// what claimdeck adds. Status is the contract's word on every backend; the
// backend's own word is NativeStatus.
type TaskJSON struct {
	PageID       string `json:"page_id"`
	TaskID       string `json:"task_id"`
	Source       string `json:"source"`
	Title        string `json:"title"`
	Status       string `json:"status"`
	NativeStatus string `json:"native_status"`
	State        string `json:"state"`
	Priority     int    `json:"priority"`
	Class        string `json:"class"`
	ClaimedBy    string `json:"claimed_by"`
	Agent        string `json:"agent"`
	AgentRun     string `json:"agent_run"`
	Node         string `json:"node,omitempty"`
	LockToken    string `json:"lock_token"`
	LockExpires  string `json:"lock_expires"`
	ClaimedAt    string `json:"claimed_at,omitempty"`
	Reason       string `json:"reason"`
	Artifacts    string `json:"artifacts,omitempty"`
	ReservedFor  string `json:"reserved_for,omitempty"`
	ReservedTil  string `json:"reserved_until,omitempty"`
	Parent       string `json:"parent,omitempty"`
	OpenSubs     int    `json:"open_subtasks,omitempty"`
	Version      string `json:"version,omitempty"`
	Problem      string `json:"problem,omitempty"`
	// Subtasks is filled by get, from sources that keep sub-tasks.
	Subtasks []subtaskJSON `json:"subtasks,omitempty"`
	// The task's standing (model.Classify), in list, get and next.
	Level       string `json:"level,omitempty"`
	NodeDown    bool   `json:"node_down,omitempty"`
	StaleReason string `json:"stale_reason,omitempty"`
	// History is the task's timeline (model.Timeline), newest last.
	History []EventJSON `json:"history,omitempty"`
}

// eventJSON is one line of a task's timeline.
type EventJSON struct {
	At     string `json:"at"`
	Actor  string `json:"actor"`
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Door is where the trail recorded the request came in; Result is
	// "applied" or the code a refused attempt got (absent where the
	// backend did not record one).
	Door   string `json:"door,omitempty"`
	Result string `json:"result,omitempty"`
}

// subtaskJSON is one sub-task as get lists it under its parent, its status
// in the contract's word as the task's own.
type subtaskJSON struct {
	PageID       string `json:"page_id"`
	TaskID       string `json:"task_id"`
	Title        string `json:"title"`
	Status       string `json:"status"`
	NativeStatus string `json:"native_status"`
	State        string `json:"state"`
}

func Stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// toJSON is the task as an answer carries it; the lock token is shown as
// a prefix unless the answer goes to the token's holder.
func toJSON(t *model.Task, holder bool) *TaskJSON {
	if t == nil {
		return nil
	}
	var until time.Time
	if r := t.Reserved(); r != nil {
		until = r.Until
	}
	token := t.Claim().Token
	if !holder {
		token = model.ShownToken(token)
	}
	var subs []subtaskJSON
	if t.More().Family != nil {
		for _, s := range t.More().Family.Subtasks {
			subs = append(subs, subtaskJSON{PageID: s.ID, TaskID: s.Key, Title: s.Title, Status: s.State.Contract(), NativeStatus: s.RawStatus, State: s.State.String()})
		}
	}
	return &TaskJSON{
		History: historyJSON(t), Subtasks: subs, PageID: t.ID, TaskID: t.DisplayKey(), Source: t.Source, Title: t.Title,
		Status: t.State.Contract(), NativeStatus: t.RawStatus, State: t.State.String(), Priority: t.Priority, Class: t.Class.String(),
		ClaimedBy: t.Claim().Holder.String(), Agent: t.Claim().Name, AgentRun: t.Claim().RunID, Node: t.Claim().Node,
		LockToken: token, LockExpires: Stamp(t.Claim().Expires.Time()), ClaimedAt: Stamp(t.Claim().ClaimedAt.Time()),
		Reason: t.More().Reason, Artifacts: t.More().Artifacts,
		ReservedFor: t.ReservedFor(), ReservedTil: Stamp(until),
		Parent: t.More().Parent, OpenSubs: int(t.OpenSubtasks), Version: t.Version, Problem: t.More().Problem,
	}
}

// printer writes results as JSON (the default, for agents) or a table. In
// table mode errors go to errw, so a pipe of the table holds only rows.
type Printer struct {
	W, errw io.Writer
	table   bool
	// width, in table mode on a terminal, is the terminal's: each row is
	// cut to it. 0: rows are whole (a pipe, a file).
	Width int
	// now is the time relative times are read from (time.Now).
	now func() time.Time
	// classify, when set, adds each task's standing (list, get, next).
	classify func(*model.Task) model.Classification
	// holder: the answer goes to the token's holder (see answer.holder).
	holder bool
	// limit caps a list (list --limit; 0 shows all).
	limit int
}

func (p Printer) answer(an Answer) error {
	p.classify, p.holder = an.classify, an.Holder
	if an.Warning != "" && p.errw != nil {
		fmt.Fprintln(p.errw, "warning: "+an.Warning)
	}
	more := an.more
	if an.list && p.limit > 0 && len(an.Tasks) > p.limit {
		more = len(an.Tasks) - p.limit
		an.Tasks = an.Tasks[:p.limit]
	}
	if an.list && more != 0 {
		// The list goes on (--limit 0 for all of it): "truncated" says so
		// always, "more" how many, where the source counted them (a first
		// screen of a SQL queue reads one task past the limit, no further).
		if !p.table {
			out := an.Payload()
			out["truncated"] = true
			if more > 0 {
				out["more"] = more
			}
			return p.JSON(out)
		}
		if err := p.tasks(an.Tasks); err != nil {
			return err
		}
		count := "more"
		if more > 0 {
			count = fmt.Sprintf("%d more", more)
		}
		_, err := fmt.Fprintf(p.W, "… and %s in pull order: --limit 0 shows all, --filter or --status narrows\n", count)
		return err
	}
	if an.list {
		return p.tasks(an.Tasks)
	}
	if an.Warning != "" && !p.table {
		return p.JSON(an.Payload())
	}
	return p.task(an.Task)
}

func (p Printer) ToJSON(t *model.Task) *TaskJSON {
	j := toJSON(t, p.holder)
	if j != nil && p.classify != nil {
		c := p.classify(t)
		if c.Level != model.LevelNone {
			j.Level = c.Level.String()
		}
		j.NodeDown, j.StaleReason = c.Placement.Down, c.Reason
	}
	return j
}

func (p Printer) task(t *model.Task) error {
	if p.table {
		if t == nil {
			_, err := fmt.Fprintln(p.W, "no task")
			return err
		}
		if err := p.tasks([]*model.Task{t}); err != nil {
			return err
		}
		return p.timeline(t)
	}
	return p.JSON(Answer{Task: t, classify: p.classify, Holder: p.holder}.Payload())
}

func (p Printer) tasks(ts []*model.Task) error {
	if !p.table {
		return p.JSON(Answer{Tasks: ts, list: true, classify: p.classify}.Payload())
	}
	tw := tabwriter.NewWriter(p.Fitted(), 0, 4, 2, ' ', 0)
	header := "SOURCE\tID\tSTATUS\tCLASS\tPRIO\tHOLDER\tEXPIRES\tTITLE"
	if p.classify != nil {
		header += "\tSTANDING"
	}
	fmt.Fprintln(tw, header)
	for _, t := range ts {
		status := t.State.Contract()
		if t.More().Problem != "" {
			status = "BROKEN"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", oneLine(t.Source), oneLine(t.DisplayKey()), status, t.Class,
			model.PriorityName(t.Priority), oneLine(t.Claim().Name), p.relative(t.Claim().Expires.Time()), oneLine(t.Title))
		switch c := p.standing(t); {
		case t.More().Problem != "":
			// Last, and whole: the path names the file to repair.
			fmt.Fprintf(tw, "\tBROKEN: %s", strings.Join(strings.Fields(theme.Safe(t.More().Problem)), " "))
		case c.Stale():
			fmt.Fprintf(tw, "\t%s: %s", c.Level, oneLine(c.Reason))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// relative is a time as a person reads it at a glance: "in 12m", "3h ago".
func (p Printer) relative(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	now := time.Now
	if p.now != nil {
		now = p.now
	}
	return RelTime(t, now())
}

func RelTime(t, now time.Time) string {
	d := t.Sub(now)
	ago := d < 0
	if ago {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		s = fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
	if ago {
		return s + " ago"
	}
	return "in " + s
}

// fitted is p.w, cutting each line to the terminal's width when there is
// one.
func (p Printer) Fitted() io.Writer {
	if p.Width <= 0 {
		return p.W
	}
	return &lineCutter{w: p.W, width: p.Width}
}

// lineCutter cuts every line written through it to width cells, marking a
// cut with "…".
type lineCutter struct {
	w     io.Writer
	width int
	line  []byte
}

func (c *lineCutter) Write(b []byte) (int, error) {
	for _, ch := range b {
		if ch != '\n' {
			c.line = append(c.line, ch)
			continue
		}
		out := ansi.Truncate(string(c.line), c.width, "…")
		c.line = c.line[:0]
		if _, err := io.WriteString(c.w, out+"\n"); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// standing is the task's classification, or none when the command has no
// mesh or policy to classify by.
func (p Printer) standing(t *model.Task) model.Classification {
	if p.classify == nil {
		return model.Classification{}
	}
	return p.classify(t)
}

func (p Printer) JSON(v any) error {
	enc := json.NewEncoder(p.W)
	if p.table {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// failPayload is an error in the contract's JSON shape.
func FailPayload(err error) map[string]any {
	// Redact again: not every error is a *model.Error.
	return map[string]any{"ok": false, "error": map[string]string{"code": string(model.CodeOf(err)), "message": model.Redact(err.Error())}}
}

// fail prints an error in the contract's shape and returns its exit status.
func (p Printer) Fail(err error) int {
	if p.table {
		fmt.Fprintf(p.errw, "error: %s\n", theme.Safe(model.Redact(err.Error())))
	} else {
		_ = p.JSON(FailPayload(err))
	}
	return model.CodeOf(err).ExitStatus()
}

// oneLine is outside text made safe for the terminal and cut to a table cell.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(theme.Safe(s)), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// jsonOnly annotates a command whose answer has no table form: -o table is
// refused before anything runs rather than ignored.
const jsonOnly = "claimdeck/json-only"

// markJSONOnly marks the commands at paths under root as JSON only.
func markJSONOnly(root *cobra.Command, paths ...string) {
	for _, p := range paths {
		c, _, err := root.Find(strings.Fields(p))
		if err != nil || c == root {
			panic("markJSONOnly: no command " + p)
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[jsonOnly] = "true"
	}
}

// checkOutput refuses -o table for a command that answers in JSON only,
// and for an operator command over --filter, whose preview and summary are
// JSON; nothing has run yet.
func (a *Env) checkOutput(cmd *cobra.Command) error {
	if a.Output != "table" {
		return nil
	}
	// bulkFlags gives an operator command both --filter and --dry-run.
	f, d := cmd.Flags().Lookup("filter"), cmd.Flags().Lookup("dry-run")
	bulk := f != nil && d != nil && (f.Changed || d.Changed)
	switch {
	case cmd.Annotations[jsonOnly] != "":
		return model.Errorf(model.CodeMisconfigured, cmd.Name(), "", "-o table: `%s` answers in JSON only; drop -o table", cmd.CommandPath())
	case bulk:
		return model.Errorf(model.CodeMisconfigured, cmd.Name(), "", "-o table: the preview and summary of `%s --filter` are JSON only; drop -o table", cmd.CommandPath())
	}
	return nil
}

// flagError is a flag the command does not take, as MISCONFIGURED, with
// the nearest flag it does take when one is a plausible slip.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return model.Errorf(model.CodeMisconfigured, "", "", "%s", msg)
	}
	var flags []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f.Name)
		}
	})
	if near := model.Nearest(name, flags, 3); near != "" {
		msg += " (did you mean --" + near + "?)"
	}
	return model.Errorf(model.CodeMisconfigured, "", "", "%s", msg)
}
