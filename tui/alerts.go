package tui

import (
	"fmt"
	"hash/maphash"
	"io"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/theme"
)

// Alarm is one thing that newly needs a human: a claim reaching a rung of
// the ladder, or a node going DOWN.
type Alarm struct {
	Title, Body string
}

// AlertOptions say how the terminal rings (both off by default).
type AlertOptions struct {
	Bell    bool // BEL
	Desktop bool // a desktop notification: OSC 777 and OSC 9, or notify-send
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

// ringKey names what has rung, a task ('t') or a node ('n'), as a 64-bit
// hash: a derive looks up thousands of stale claims, and an integer key
// needs no string built, compared or scanned by the collector. Two names
// colliding would silence one alarm, at odds of about 2⁻⁶⁴ per pair.
func (m *Model) ringKey(kind byte, a, b string) uint64 {
	h := &m.alarms.hash
	h.Reset()
	h.WriteByte(kind)
	h.WriteString(a)
	h.WriteByte(0)
	h.WriteString(b)
	return h.Sum64()
}

// watchLevel queues an alarm the first time a task reaches a ringing rung.
func (m *Model) watchLevel(t *model.Task, lv model.Level) {
	if lv < ringFrom || lv > model.LevelEscalated || m.screen.paused || m.opts.Alert == nil {
		return // nothing rings, so there is nothing to remember
	}
	k := m.ringKey('t', t.Source, t.ID)
	if m.alarms.rang[k] >= lv {
		return
	}
	m.alarms.rang[k] = lv
	m.alarms.ringing = append(m.alarms.ringing, Alarm{Title: fmt.Sprintf("%s %s", t.DisplayKey(), strings.ToUpper(lv.String())),
		Body: fmt.Sprintf("%s on %s, held by %s", theme.Safe(t.Title), t.Source, t.Claim.Name)})
}

// watchDown queues an alarm the first time a node is seen DOWN.
func (m *Model) watchDown(node string) {
	k := m.ringKey('n', node, "")
	if m.screen.paused || m.opts.Alert == nil || m.alarms.rang[k] > 0 {
		return
	}
	m.alarms.rang[k] = model.LevelEscalated
	m.alarms.ringing = append(m.alarms.ringing, Alarm{Title: "node " + node + " DOWN", Body: "its claims are stale"})
}

// ring hands the queued alarms to Options.Alert off the UI loop.
func (m *Model) ring() tea.Cmd {
	if len(m.alarms.ringing) == 0 || m.opts.Alert == nil {
		m.alarms.ringing = m.alarms.ringing[:0]
		return nil
	}
	alarms, alert := m.alarms.ringing, m.opts.Alert
	m.alarms.ringing = nil
	if len(alarms) > maxRing {
		// A dashboard opened on a bad night rings once, not per task.
		alarms = []Alarm{{Title: fmt.Sprintf("%d new alarms", len(alarms)), Body: alarms[0].Title + " and more: see the top bar"}}
	}
	return func() tea.Msg {
		for _, a := range alarms {
			alert(a)
		}
		return nil
	}
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
		if path, err := exec.LookPath("notify-send"); err == nil {
			if exec.Command(path, "--app-name=claimdeck", title, body).Run() == nil {
				return
			}
		}
		_, _ = fmt.Fprintf(w, "\x1b]777;notify;%s;%s\x1b\\\x1b]9;%s: %s\x1b\\", title, body, title, body)
	}
}

// safe makes a notification's text harmless on the terminal (theme.Safe)
// and keeps it from ending an OSC parameter early.
func safe(s string) string { return strings.ReplaceAll(theme.Safe(s), ";", ",") }
