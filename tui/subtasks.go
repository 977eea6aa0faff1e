package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// familyLines are a task's parent and sub-tasks as the snapshot shows
// them, for its detail view (which makes every line safe to print).
func (b *board) familyLines(t *model.Task) []string {
	var out []string
	if t.Parent() != "" {
		parent := "not in view"
		for _, p := range b.all {
			if p.ID == t.Parent() && p.Source == t.Source {
				parent = p.DisplayKey() + "  " + p.State.String() + "  " + p.Title
				break
			}
		}
		out = append(out, fmt.Sprintf("%-11s %s (%s)", "parent", t.Parent(), parent))
	}
	subs := b.subs.Of(t)
	if len(subs) == 0 {
		return out
	}
	out = append(out, "", fmt.Sprintf("sub-tasks (%d, %d open)", len(subs), b.subs.Open(t)))
	for _, s := range subs {
		out = append(out, fmt.Sprintf("  %-10s %-9s %s", s.DisplayKey(), s.State, s.Title))
	}
	return out
}

// withFamily puts the family lines of t before the detail's history.
func (b *board) withFamily(t *model.Task, lines []string) []string {
	fam := b.familyLines(t)
	if len(fam) == 0 {
		return lines
	}
	if fam[0] != "" {
		fam = append([]string{""}, fam...)
	}
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "history (") })
	if at < 0 {
		return append(lines, fam...)
	}
	return slices.Insert(lines, max(at-1, 0), fam...)
}

// waitingMark prefixes the title of a task whose open sub-tasks keep it
// from completing.
func (b *board) waitingMark(t *model.Task) string {
	if n := b.subs.Open(t); n > 0 {
		return fmt.Sprintf("[%d open] ", n)
	}
	return ""
}
