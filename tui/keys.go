package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is every key the dashboard answers, so help is generated from it
// and a config file can rebind any of it (see Rebind).
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextView, PrevView                      key.Binding
	Queue, Leases, Stale, Nodes, Activity   key.Binding
	Detail, Filter, Sort, Help, Refresh     key.Binding
	Claim, Release, Cancel, Handoff         key.Binding
	Back, Quit                              key.Binding
}

// DefaultKeyMap is the dashboard's key map. No destructive action sits on a
// ctrl-key: a slip of the finger must not release a production lease.
func DefaultKeyMap() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	return KeyMap{
		Up:       b("up", "up", "k"),
		Down:     b("down", "down", "j"),
		PageUp:   b("page up", "pgup", "ctrl+u"),
		PageDown: b("page down", "pgdown", "ctrl+d", " "),
		Top:      b("top", "home", "g"),
		Bottom:   b("bottom", "end", "G"),
		NextView: b("next view", "tab"),
		PrevView: b("previous view", "shift+tab"),
		Queue:    b("queue", "1"),
		Leases:   b("leases", "2"),
		Stale:    b("stale", "3"),
		Nodes:    b("nodes", "4"),
		Activity: b("activity", "5"),
		Detail:   b("details", "enter"),
		Filter:   b("filter", "/"),
		Sort:     b("sort", "s"),
		Help:     b("help", "?"),
		Refresh:  b("refresh", "R", "ctrl+r"),
		Claim:    b("claim", "c"),
		Release:  b("release", "r"),
		Cancel:   b("cancel", "x"),
		Handoff:  b("hand off", "h"),
		Back:     b("back", "esc"),
		Quit:     b("quit", "q", "ctrl+c"),
	}
}

// named lists the bindings by the names a config file uses.
func (k *KeyMap) named() map[string]*key.Binding {
	return map[string]*key.Binding{
		"up": &k.Up, "down": &k.Down, "page-up": &k.PageUp, "page-down": &k.PageDown,
		"top": &k.Top, "bottom": &k.Bottom, "next-view": &k.NextView, "prev-view": &k.PrevView,
		"queue": &k.Queue, "leases": &k.Leases, "stale": &k.Stale, "nodes": &k.Nodes, "activity": &k.Activity,
		"detail": &k.Detail, "filter": &k.Filter, "sort": &k.Sort, "help": &k.Help, "refresh": &k.Refresh,
		"claim": &k.Claim, "release": &k.Release, "cancel": &k.Cancel, "handoff": &k.Handoff,
		"back": &k.Back, "quit": &k.Quit,
	}
}

// destructive names the actions that change a task.
var destructive = map[string]bool{"claim": true, "release": true, "cancel": true, "handoff": true}

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
		b.SetHelp(ks[0], b.Help().Desc)
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

// ShortHelp is the one-line help under the table.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Claim, k.Release, k.Cancel, k.Handoff, k.Filter, k.Detail, k.Sort, k.Help, k.Quit}
}

// FullHelp is the help screen, one column per kind of key.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Queue, k.Leases, k.Stale, k.Nodes, k.Activity, k.NextView, k.PrevView},
		{k.Detail, k.Filter, k.Sort, k.Refresh, k.Back, k.Help, k.Quit},
		{k.Claim, k.Release, k.Cancel, k.Handoff},
	}
}

// setActions enables or disables the actions that change a task; disabled
// bindings neither match nor show in help, so help tells the truth.
func (k *KeyMap) setActions(on bool) {
	for _, b := range []*key.Binding{&k.Claim, &k.Release, &k.Cancel, &k.Handoff} {
		b.SetEnabled(on)
	}
}
