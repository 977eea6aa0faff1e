package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"

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
	Approve, Rework, Complete, ToReview, Block, GiveBack key.Binding
	Mark, MarkAll, MarkRange                             key.Binding
	Copy, Back, Quit                                     key.Binding
	// Dialog keys: answered only inside a dialog, so they may share keys
	// with the map above; they are not rebound.
	Yes, Again, Close, NextField, Pick, Submit key.Binding
}

// DefaultKeyMap is the dashboard's key map. No destructive action sits on a
// ctrl-key: a slip of the finger must not release a production lease.
func DefaultKeyMap() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keysHelp(keys), help))
	}
	k := KeyMap{
		Up:       b("up", "up", "k"),
		Down:     b("down", "down", "j"),
		PageUp:   b("page up", "pgup", "ctrl+u"),
		PageDown: b("page down", "pgdown", "ctrl+d"),
		Top:      b("top", "home", "g"),
		Bottom:   b("bottom", "end", "G"),
		NextView: b("next view", "tab"),
		PrevView: b("previous view", "shift+tab"),
		Detail:   b("details", "enter"),
		Filter:   b("filter", "/"),
		Sort:     b("sort", "s"),
		Help:     b("help", "?"),
		Refresh:  b("refresh", "R", "ctrl+r"),
		Claim:    b("claim", "c"),
		Release:  b("release", "r"),
		Cancel:   b("cancel", "x"),
		Handoff:  b("hand off", "h"),
		Approve:  b("approve", "a"),
		Rework:   b("rework", "w"),
		Complete: b("complete mine", "d"),
		ToReview: b("send mine to review", "v"),
		Block:    b("block mine", "b"),
		GiveBack: b("give mine back", "u"),
		Command:  b("command", ":"),
		Palette:  b("command palette", "ctrl+p"),
		Mark:     b("mark/unmark, then next row", " "),
		MarkAll:  b("mark all shown", "*"),
		// The terminal sends ctrl-space as NUL, which Bubble Tea names ctrl+@.
		MarkRange: key.NewBinding(key.WithKeys("ctrl+@"), key.WithHelp("ctrl+space", "mark range")),
		Copy:      b("copy id", "y"),
		Back:      b("back", "esc"),
		Quit:      b("quit", "q", "ctrl+c"),
		Yes:       b("do it", "y", "Y"),
		Again:     b("look again", "a"),
		Close:     b("close", "esc", "enter", "q"),
		NextField: b("next field", "tab", "down"),
		Pick:      key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←/→", "choose")),
		Submit:    b("continue", "enter"),
	}
	k.Yes.SetHelp("y", "do it")
	k.Close.SetHelp("esc", "close")
	for v, spec := range views {
		k.Views[v] = b(spec.help, spec.key)
	}
	return k
}

// keysHelp names a binding's first two keys, so help lists j/k and g/G
// beside the arrows.
func keysHelp(keys []string) string {
	keys = keys[:min(len(keys), 2)]
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k
		if k == " " {
			names[i] = "space"
		}
	}
	return strings.Join(names, "/")
}

// named lists the bindings by the names a config file uses.
func (k *KeyMap) named() map[string]*key.Binding {
	named := map[string]*key.Binding{
		"up": &k.Up, "down": &k.Down, "page-up": &k.PageUp, "page-down": &k.PageDown,
		"top": &k.Top, "bottom": &k.Bottom, "next-view": &k.NextView, "prev-view": &k.PrevView,
		"detail": &k.Detail, "filter": &k.Filter, "sort": &k.Sort, "help": &k.Help, "refresh": &k.Refresh,
		"claim": &k.Claim, "release": &k.Release, "cancel": &k.Cancel, "handoff": &k.Handoff,
		"approve": &k.Approve, "rework": &k.Rework, "complete": &k.Complete, "review": &k.ToReview, "block": &k.Block, "give-back": &k.GiveBack,
		"mark": &k.Mark, "mark-all": &k.MarkAll, "mark-range": &k.MarkRange, "command": &k.Command, "palette": &k.Palette,
		"copy": &k.Copy, "back": &k.Back, "quit": &k.Quit,
	}
	for v, spec := range views {
		named[spec.name] = &k.Views[v]
	}
	return named
}

// destructive names the actions that change a task.
var destructive = map[string]bool{"claim": true, "release": true, "cancel": true, "handoff": true,
	"approve": true, "rework": true, "complete": true, "review": true, "block": true, "give-back": true}

// taskActions are the key map's actions on a task, in the order help and
// the detail list them: the board, the detail, its hint and setActions all
// read this one table.
var taskActions = []struct {
	binding func(*KeyMap) *key.Binding
	action  model.Action
}{
	{func(k *KeyMap) *key.Binding { return &k.Claim }, model.ActionTakeover},
	{func(k *KeyMap) *key.Binding { return &k.Release }, model.ActionForceRelease},
	{func(k *KeyMap) *key.Binding { return &k.Cancel }, model.ActionCancel},
	{func(k *KeyMap) *key.Binding { return &k.Handoff }, model.ActionHandoff},
	{func(k *KeyMap) *key.Binding { return &k.Approve }, model.ActionApprove},
	{func(k *KeyMap) *key.Binding { return &k.Rework }, model.ActionRework},
	{func(k *KeyMap) *key.Binding { return &k.Complete }, model.ActionComplete},
	{func(k *KeyMap) *key.Binding { return &k.ToReview }, model.ActionReview},
	{func(k *KeyMap) *key.Binding { return &k.Block }, model.ActionBlock},
	{func(k *KeyMap) *key.Binding { return &k.GiveBack }, model.ActionRelease},
}

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
			if destructive[name] && strings.HasPrefix(strings.ToLower(s), "ctrl+") {
				return k, fmt.Errorf("keys: %s may not sit on %s: no destructive action on a ctrl-key", name, s)
			}
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

// FullHelp is the help screen, one column per kind of key.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		append(k.viewKeys(), k.NextView, k.PrevView),
		{k.Detail, k.Filter, k.Command, k.Palette, k.Sort, k.Refresh, k.Copy, k.Back, k.Help, k.Quit},
		{k.Claim, k.Release, k.Cancel, k.Handoff},
		{k.Approve, k.Rework, k.Complete, k.ToReview, k.Block, k.GiveBack},
		{k.Mark, k.MarkRange, k.MarkAll},
	}
}

// setActions enables or disables each action that changes a task (in
// taskActions' order); disabled bindings neither match nor show in help,
// so help tells the truth.
func (k *KeyMap) setActions(on []bool) {
	for i, b := range k.actionKeys() {
		b.SetEnabled(i < len(on) && on[i])
	}
}
