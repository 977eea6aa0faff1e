package tui

import (
	"fmt"
	"hash/maphash"
	"io"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/theme"
)

// Alarm is one thing that newly needs a human: a claim reaching a rung of
// the ladder, or a node going DOWN.
type Alarm struct {
	Title, Body string
	review      bool // a task waiting for a reviewer: collapsed apart from the alarms
}

// AlertOptions say how the terminal rings (both off by default).
type AlertOptions struct {
	Bell    bool // BEL
	Desktop bool // a desktop notification: OSC 777 and OSC 9, or notify-send
	// Remote says the terminal is not this host's (an SSH session): a
	// notification goes to it as OSC 777 and OSC 9, never notify-send here.
	Remote bool
}

// maxRing is the most alarms rung one by one at a time.
const maxRing = 3

// alarms are what has rung and what waits to ring.
type alarms struct {
	rang    map[uint64]model.Level // what has rung (ringKey), at which level
	hash    maphash.Hash
	ringing []Alarm // new alarms waiting for the next ring
}

// ringFrom is the lowest rung that rings: a stale claim alone is the
// Stale view's business, not a page.
const ringFrom = model.LevelUrgent

// key names what has rung, a task ('t') or a node ('n'), as a 64-bit
// hash: a derive looks up thousands of stale claims, and an integer key
// needs no string built, compared or scanned by the collector. Two names
// colliding would silence one alarm, at odds of about 2⁻⁶⁴ per pair.
func (al *alarms) key(kind byte, a, b string) uint64 {
	h := &al.hash
	h.Reset()
	h.WriteByte(kind)
	h.WriteString(a)
	h.WriteByte(0)
	h.WriteString(b)
	return h.Sum64()
}

// level queues an alarm the first time a task reaches a ringing rung.
func (al *alarms) level(t *model.Task, lv model.Level) {
	if lv < ringFrom || lv > model.LevelEscalated {
		return
	}
	k := al.key('t', t.Source, t.ID)
	if al.rang[k] >= lv {
		return
	}
	al.rang[k] = lv
	al.ringing = append(al.ringing, Alarm{Title: fmt.Sprintf("%s %s", t.DisplayKey(), strings.ToUpper(lv.String())),
		Body: fmt.Sprintf("%s on %s, held by %s", theme.Safe(t.Title), t.Source, t.Claim().Name)})
}

// down queues an alarm the first time a node is seen DOWN.
func (al *alarms) down(node string) {
	k := al.key('n', node, "")
	if al.rang[k] > 0 {
		return
	}
	al.rang[k] = model.LevelEscalated
	al.ringing = append(al.ringing, Alarm{Title: "node " + node + " DOWN", Body: "its claims are stale"})
}

// review queues an alarm the first time a task waits for a reviewer.
func (al *alarms) review(t *model.Task) {
	k := al.key('r', t.Source, t.ID)
	if al.rang[k] > 0 {
		return
	}
	al.rang[k] = model.LevelStale
	who := model.Submitter(t)
	if who == "" {
		who = "an agent"
	}
	al.ringing = append(al.ringing, Alarm{Title: t.DisplayKey() + " waits for review",
		Body: fmt.Sprintf("%s on %s, from %s", theme.Safe(t.Title), t.Source, who), review: true})
}

// watch queues the alarms of the board's rows as derived: the stale
// claims' rungs and the reviews waiting.
func (al *alarms) watch(b *board) {
	for i, t := range b.stale {
		al.level(t, severity(b.staleClass[i]))
	}
	if b.reviews == 0 {
		return
	}
	for _, r := range b.panes[parkedView].members {
		if r.t.State == model.StateReview {
			al.review(r.t)
		}
	}
}

// ring hands the queued alarms to alert off the UI loop. While a person
// types (a dialog's field, the filter, the : line) they wait: a
// notification must not take the focus from what is being typed.
func (al *alarms) ring(alert func(Alarm), typing bool) tea.Cmd {
	if len(al.ringing) == 0 || alert == nil {
		al.ringing = al.ringing[:0]
		return nil
	}
	if typing {
		return nil
	}
	var alarms, reviews []Alarm
	for _, a := range al.ringing {
		if a.review {
			reviews = append(reviews, a)
		} else {
			alarms = append(alarms, a)
		}
	}
	al.ringing = nil
	// A dashboard opened on a bad night rings once, not per task; a pile
	// of reviews rings apart, so it never hides a DOWN node.
	alarms = append(collapse(alarms, "new alarms"), collapse(reviews, "tasks wait for review")...)
	return func() tea.Msg {
		for _, a := range alarms {
			alert(a)
		}
		return nil
	}
}

// collapse is alarms as rung: one by one up to maxRing, else one that
// counts them.
func collapse(alarms []Alarm, what string) []Alarm {
	if len(alarms) <= maxRing {
		return alarms
	}
	return []Alarm{{Title: fmt.Sprintf("%d %s", len(alarms), what), Body: alarms[0].Title + " and more: see the top bar"}}
}

// terminal rings w's terminal as the options say, or nil when both are off.
func (o AlertOptions) terminal(w io.Writer) func(Alarm) {
	if !o.Bell && !o.Desktop {
		return nil
	}
	return func(a Alarm) {
		title, body := safe(a.Title), safe(a.Body)
		if o.Bell {
			_, _ = io.WriteString(w, "\a")
		}
		if !o.Desktop {
			return
		}
		// notify-send where there is one; the terminal's own notification
		// (OSC 777 for VTE and others, OSC 9 for iTerm2 and kitty) otherwise.
		if path, err := exec.LookPath("notify-send"); err == nil && !o.Remote {
			if exec.Command(path, "--app-name=claimdeck", "--", title, body).Run() == nil { // "--": a title may start with -
				return
			}
		}
		_, _ = fmt.Fprintf(w, "\x1b]777;notify;%s;%s\x1b\\\x1b]9;%s: %s\x1b\\", title, body, title, body)
	}
}

// safe makes a notification's text harmless on the terminal (theme.Safe)
// and keeps it from ending an OSC parameter early.
func safe(s string) string { return strings.ReplaceAll(theme.Safe(s), ";", ",") }

// windowTitle is the terminal's title: the worst of what needs a person
// and how much, so a tab or a window list shows it while the dashboard is
// out of sight ("claimdeck · 2 DOWN · 3 need you").
func (b *board) windowTitle() string {
	parts := []string{appName}
	unreachable := 0
	for i := range b.snap.Sources {
		if b.snap.Sources[i].Status == hub.StatusDegraded {
			unreachable++
		}
	}
	if unreachable > 0 {
		parts = append(parts, fmt.Sprintf("%d UNREACHABLE", unreachable))
	}
	down := 0
	for _, n := range b.snap.Mesh.Nodes() {
		if n.Status == model.NodeDown {
			down++
		}
	}
	if down > 0 {
		parts = append(parts, fmt.Sprintf("%d DOWN", down))
	}
	need := b.reviews
	for lv := ringFrom; lv <= levelBroken; lv++ {
		need += b.rungs[lv]
	}
	if need > 0 {
		parts = append(parts, fmt.Sprintf("%d need you", need))
	}
	return strings.Join(parts, " · ")
}
