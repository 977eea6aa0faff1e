package tui

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/claimdeck/claimdeck/model"
)

// KeyMap is every key the dashboard answers, so help is generated from it
// and a config file can rebind any of it (see Rebind).
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextView, PrevView                      key.Binding
	// Views open each view, in views' order; their keys come from there.
	Views                               [viewCount]key.Binding
	Detail, Filter, Sort, Help, Refresh key.Binding
	Command, Palette                    key.Binding
	Claim, Release, Cancel, Handoff     key.Binding
	// The reviewer's keys on a task in Review, and a person's on their
	// own claim.
	Approve, Rework, Unblock, Complete, ToReview, Block, GiveBack key.Binding
	Mark, MarkAll, MarkRange                                      key.Binding
	Copy, Back, Quit                                              key.Binding
	// Dialog keys: answered only inside a dialog, so they may share keys
	// with the map above; they are not rebound.
	Yes, Again, Close, NextField, Pick, Submit key.Binding
}

// keyGroup is the help screen's column a key is listed in.
type keyGroup int

const (
	inDialog      keyGroup = iota // a dialog's key: in no column, never rebound
	moveGroup                     // moving over the rows
	viewGroup                     // opening the views
	boardGroup                    // details, filter, commands, …
	overrideGroup                 // the operator's overrides
	reviewGroup                   // the reviewer's, and a person's on their own claim
	markGroup                     // marks for a bulk action
)

// keyRow is one key of the dashboard, as k9s binds a KeyAction: the name a
// config file rebinds it by, its default keys and help, whether it changes
// a task (never on a ctrl-key then), the task action it starts, and its
// help column. The bindings, Rebind's names, the destructive check, the
// help columns and taskActions are all read from keyRows; a new key is its
// field in KeyMap and one row here.
type keyRow struct {
	name        string // "" for a dialog's key
	field       func(*KeyMap) *key.Binding
	keys        []string
	help        string
	helpKey     string // how help names the keys, when not by the first two
	destructive bool
	action      model.Action // "" unless it acts on a task
	group       keyGroup
}

// keyRows are every key, in the order help lists them in their columns.
// No destructive action sits on a ctrl-key: a slip of the finger must not
// release a production lease.
var keyRows = func() []keyRow {
	task := func(name string, field func(*KeyMap) *key.Binding, help string, a model.Action, g keyGroup, keys ...string) keyRow {
		return keyRow{name: name, field: field, keys: keys, help: help, destructive: true, action: a, group: g}
	}
	rows := []keyRow{
		{name: "up", field: func(k *KeyMap) *key.Binding { return &k.Up }, keys: []string{"up", "k"}, help: "up", group: moveGroup},
		{name: "down", field: func(k *KeyMap) *key.Binding { return &k.Down }, keys: []string{"down", "j"}, help: "down", group: moveGroup},
		{name: "page-up", field: func(k *KeyMap) *key.Binding { return &k.PageUp }, keys: []string{"pgup", "ctrl+u"}, help: "page up", group: moveGroup},
		{name: "page-down", field: func(k *KeyMap) *key.Binding { return &k.PageDown }, keys: []string{"pgdown", "ctrl+d"}, help: "page down", group: moveGroup},
		{name: "top", field: func(k *KeyMap) *key.Binding { return &k.Top }, keys: []string{"home", "g"}, help: "top", group: moveGroup},
		{name: "bottom", field: func(k *KeyMap) *key.Binding { return &k.Bottom }, keys: []string{"end", "G"}, help: "bottom", group: moveGroup},
	}
	for v, spec := range views {
		rows = append(rows, keyRow{name: spec.name, field: func(k *KeyMap) *key.Binding { return &k.Views[v] }, keys: []string{spec.key}, help: spec.help, group: viewGroup})
	}
	return append(rows, []keyRow{
		{name: "next-view", field: func(k *KeyMap) *key.Binding { return &k.NextView }, keys: []string{"tab"}, help: "next view", group: viewGroup},
		{name: "prev-view", field: func(k *KeyMap) *key.Binding { return &k.PrevView }, keys: []string{"shift+tab"}, help: "previous view", group: viewGroup},

		{name: "detail", field: func(k *KeyMap) *key.Binding { return &k.Detail }, keys: []string{"enter"}, help: "details", group: boardGroup},
		{name: "filter", field: func(k *KeyMap) *key.Binding { return &k.Filter }, keys: []string{"/"}, help: "filter", group: boardGroup},
		{name: "command", field: func(k *KeyMap) *key.Binding { return &k.Command }, keys: []string{":"}, help: "command", group: boardGroup},
		{name: "palette", field: func(k *KeyMap) *key.Binding { return &k.Palette }, keys: []string{"ctrl+p"}, help: "command palette", group: boardGroup},
		{name: "sort", field: func(k *KeyMap) *key.Binding { return &k.Sort }, keys: []string{"s"}, help: "sort", group: boardGroup},
		{name: "refresh", field: func(k *KeyMap) *key.Binding { return &k.Refresh }, keys: []string{"R", "ctrl+r"}, help: "refresh", group: boardGroup},
		{name: "copy", field: func(k *KeyMap) *key.Binding { return &k.Copy }, keys: []string{"y"}, help: "copy id", group: boardGroup},
		{name: "back", field: func(k *KeyMap) *key.Binding { return &k.Back }, keys: []string{"esc"}, help: "back", group: boardGroup},
		{name: "help", field: func(k *KeyMap) *key.Binding { return &k.Help }, keys: []string{"?"}, help: "help", group: boardGroup},
		{name: "quit", field: func(k *KeyMap) *key.Binding { return &k.Quit }, keys: []string{"q", "ctrl+c"}, help: "quit", group: boardGroup},

		task("claim", func(k *KeyMap) *key.Binding { return &k.Claim }, "claim", model.ActionTakeover, overrideGroup, "c"),
		task("release", func(k *KeyMap) *key.Binding { return &k.Release }, "release", model.ActionForceRelease, overrideGroup, "r"),
		task("cancel", func(k *KeyMap) *key.Binding { return &k.Cancel }, "cancel", model.ActionCancel, overrideGroup, "x"),
		task("handoff", func(k *KeyMap) *key.Binding { return &k.Handoff }, "hand off", model.ActionHandoff, overrideGroup, "h"),
		task("approve", func(k *KeyMap) *key.Binding { return &k.Approve }, "approve", model.ActionApprove, reviewGroup, "a"),
		task("rework", func(k *KeyMap) *key.Binding { return &k.Rework }, "rework", model.ActionRework, reviewGroup, "w"),
		task("unblock", func(k *KeyMap) *key.Binding { return &k.Unblock }, "unblock", model.ActionUnblock, reviewGroup, "n"),
		task("complete", func(k *KeyMap) *key.Binding { return &k.Complete }, "complete mine", model.ActionComplete, reviewGroup, "d"),
		task("review", func(k *KeyMap) *key.Binding { return &k.ToReview }, "send mine to review", model.ActionReview, reviewGroup, "v"),
		task("block", func(k *KeyMap) *key.Binding { return &k.Block }, "block mine", model.ActionBlock, reviewGroup, "b"),
		task("give-back", func(k *KeyMap) *key.Binding { return &k.GiveBack }, "give mine back", model.ActionRelease, reviewGroup, "u"),

		{name: "mark", field: func(k *KeyMap) *key.Binding { return &k.Mark }, keys: []string{"space"}, help: "mark/unmark, then next row", group: markGroup},
		// A terminal sends ctrl-space as NUL, which Bubble Tea names
		// ctrl+space (ctrl+@ where the terminal says NUL is ctrl-@).
		{name: "mark-range", field: func(k *KeyMap) *key.Binding { return &k.MarkRange }, keys: []string{"ctrl+space", "ctrl+@"}, help: "mark range", helpKey: "ctrl+space", group: markGroup},
		{name: "mark-all", field: func(k *KeyMap) *key.Binding { return &k.MarkAll }, keys: []string{"*"}, help: "mark all shown", group: markGroup},

		{field: func(k *KeyMap) *key.Binding { return &k.Yes }, keys: []string{"y", "Y"}, help: "do it", helpKey: "y"},
		{field: func(k *KeyMap) *key.Binding { return &k.Again }, keys: []string{"a"}, help: "look again"},
		{field: func(k *KeyMap) *key.Binding { return &k.Close }, keys: []string{"esc", "enter", "q"}, help: "close", helpKey: "esc"},
		{field: func(k *KeyMap) *key.Binding { return &k.NextField }, keys: []string{"tab", "down"}, help: "next field"},
		{field: func(k *KeyMap) *key.Binding { return &k.Pick }, keys: []string{"left", "right"}, help: "choose", helpKey: "←/→"},
		{field: func(k *KeyMap) *key.Binding { return &k.Submit }, keys: []string{"enter"}, help: "continue"},
	}...)
}()

// DefaultKeyMap is the dashboard's key map, as keyRows bind it.
func DefaultKeyMap() KeyMap {
	var k KeyMap
	for _, r := range keyRows {
		*r.field(&k) = key.NewBinding(key.WithKeys(r.keys...), key.WithHelp(cmp.Or(r.helpKey, keysHelp(r.keys)), r.help))
	}
	return k
}

// keysHelp names a binding's first two keys, so help lists j/k and g/G
// beside the arrows.
func keysHelp(keys []string) string {
	keys = keys[:min(len(keys), 2)]
	names := make([]string, len(keys))
	copy(names, keys)
	return strings.Join(names, "/")
}

// v2KeyName is a key as Bubble Tea v2 names it, for a configuration
// written when v1 named the space bar " " and ctrl-space "ctrl+@".
func v2KeyName(s string) string {
	switch s {
	case " ":
		return "space"
	case "ctrl+@":
		return "ctrl+space"
	}
	return s
}

// named lists the bindings by the names a config file uses.
func (k *KeyMap) named() map[string]*key.Binding {
	named := map[string]*key.Binding{}
	for _, r := range keyRows {
		if r.name != "" {
			named[r.name] = r.field(k)
		}
	}
	return named
}

// destructive says whether the key named name changes a task.
func destructive(name string) bool {
	i := slices.IndexFunc(keyRows, func(r keyRow) bool { return r.name == name })
	return i >= 0 && keyRows[i].destructive
}

// taskAction is a key that acts on a task, and its action.
type taskAction struct {
	binding func(*KeyMap) *key.Binding
	action  model.Action
}

// taskActions are the key map's actions on a task, in keyRows' order, the
// order help and the detail list them: the board, the detail, its hint,
// setActions and the : line all read this one table.
var taskActions = func() []taskAction {
	var out []taskAction
	for _, r := range keyRows {
		if r.action != "" {
			out = append(out, taskAction{r.field, r.action})
		}
	}
	return out
}()

// actionKeys are the bindings of taskActions, in its order.
func (k *KeyMap) actionKeys() []*key.Binding {
	out := make([]*key.Binding, len(taskActions))
	for i, ta := range taskActions {
		out[i] = ta.binding(k)
	}
	return out
}

// Rebind applies a config's key map: action name → keys. It refuses
// unknown names, empty key lists, a destructive action on a ctrl-key, and
// one key bound to two actions.
func (k KeyMap) Rebind(keys map[string][]string) (KeyMap, error) {
	named := k.named()
	names := make([]string, 0, len(keys))
	for name := range keys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b, ok := named[name]
		if !ok {
			return k, fmt.Errorf("keys: unknown action %q", name)
		}
		ks := keys[name]
		if len(ks) == 0 {
			return k, fmt.Errorf("keys: %s: no keys given", name)
		}
		for _, s := range ks {
			if destructive(name) && strings.HasPrefix(strings.ToLower(s), "ctrl+") {
				return k, fmt.Errorf("keys: %s may not sit on %s: no destructive action on a ctrl-key", name, s)
			}
		}
		ks = slices.Clone(ks)
		for i, s := range ks {
			ks[i] = v2KeyName(s)
		}
		b.SetKeys(ks...)
		b.SetHelp(keysHelp(ks), b.Help().Desc)
	}
	owner := map[string]string{}
	all := make([]string, 0, len(named))
	for name := range named {
		all = append(all, name)
	}
	sort.Strings(all)
	for _, name := range all {
		for _, s := range named[name].Keys() {
			if other, dup := owner[s]; dup {
				return k, fmt.Errorf("keys: %q is bound to both %s and %s", s, other, name)
			}
			owner[s] = name
		}
	}
	return k, nil
}

// bound reports whether any action sits on key s, so a column's sort
// letter never shadows one.
func (k *KeyMap) bound(s string) bool {
	for _, b := range k.named() {
		if slices.Contains(b.Keys(), s) {
			return true
		}
	}
	return false
}

// viewKeys are the keys that open each view, in the views' order.
func (k KeyMap) viewKeys() []key.Binding { return k.Views[:] }

// ShortHelp is the one-line help under the table.
func (k KeyMap) ShortHelp() []key.Binding {
	return short(k.Approve, k.Rework, k.Complete, k.Claim, k.Release, k.Cancel, k.Handoff, k.Filter, k.Detail, k.Sort, k.Help, k.Quit)
}

// short names each binding by its first key only: the one-line help has
// no room for the others, the full help lists them.
func short(bs ...key.Binding) []key.Binding {
	for i := range bs {
		if ks := bs[i].Keys(); len(ks) > 0 {
			bs[i].SetHelp(keysHelp(ks[:1]), bs[i].Help().Desc)
		}
	}
	return bs
}

// FullHelp is the help screen, one column per group of keyRows.
func (k KeyMap) FullHelp() [][]key.Binding {
	var cols [][]key.Binding
	for g := moveGroup; g <= markGroup; g++ {
		var col []key.Binding
		for _, r := range keyRows {
			if r.group == g {
				col = append(col, *r.field(&k))
			}
		}
		cols = append(cols, col)
	}
	return cols
}

// setActions enables or disables each action that changes a task (in
// taskActions' order); disabled bindings neither match nor show in help,
// so help tells the truth.
func (k *KeyMap) setActions(on []bool) {
	for i, b := range k.actionKeys() {
		b.SetEnabled(i < len(on) && on[i])
	}
}
