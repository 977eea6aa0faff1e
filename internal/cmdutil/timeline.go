package cmdutil

import (
	"fmt"
	"text/tabwriter"

	"github.com/claimdeck/claimdeck/model"
)

// historyJSON is a task's timeline as the contract's answers carry it.
func historyJSON(t *model.Task) []EventJSON {
	var out []EventJSON
	for _, e := range model.Timeline(t) {
		out = append(out, EventJSON{At: Stamp(e.At), Actor: e.Actor, Action: e.Action, Reason: e.Reason, Detail: e.Detail, Door: string(e.Door), Result: e.Result})
	}
	return out
}

func (p Printer) History(t *model.Task) error {
	if !p.table {
		return p.JSON(map[string]any{"ok": true, "task_id": t.DisplayKey(), "page_id": t.ID, "source": t.Source, "history": historyJSON(t)})
	}
	fmt.Fprintf(p.W, "%s · %s · %s\n", t.DisplayKey(), t.Source, oneLine(t.Title))
	return p.timeline(t)
}

// timeline writes a task's timeline as a table.
func (p Printer) timeline(t *model.Task) error {
	evs := model.Timeline(t)
	if len(evs) == 0 {
		_, err := fmt.Fprintln(p.W, "no history")
		return err
	}
	tw := tabwriter.NewWriter(p.W, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tACTOR\tACTION\tREASON\tDETAIL")
	for _, e := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", Stamp(e.At), oneLine(e.Actor), oneLine(e.Action), oneLine(e.Reason), oneLine(e.Detail))
	}
	return tw.Flush()
}
