package tui

// The top bar: the views' tabs, how they share the top two lines with the
// alarm, and the flags on how the dashboard runs.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/theme"
)

// tabStyle is how much of each view's tab the top bar has room for.
type tabStyle int

const (
	tabsFull      tabStyle = iota // "2 Leases 5" for every view
	tabsShort                     // "2 Lea 5" beside the one on screen
	tabsBrief                     // "2 Lea" beside the one on screen
	tabsInitial                   // "2 L" beside the one on screen
	tabsOnlyShown                 // only the view on screen
	tabStyles
)

// topBar is how the top two lines are shared: the tabs in a style, with
// or without the app's name, and the alarm beside them or, when it does
// not fit there, on the second line.
type topBar struct {
	style tabStyle
	name  bool   // the app's name leads the tabs
	alarm string // the alarm as the first line shows it; "" when below
	below bool   // the alarm has the second line
}

// tabLabelIn is a view's tab in a style: its number, its title (cut
// short, never to a bare digit) and its count. The view on screen always
// has its whole title and count.
func (b *board) tabLabelIn(k viewKind, style tabStyle) string {
	title := views[k].title
	if k != b.active {
		switch style {
		case tabsShort, tabsBrief:
			title = shortTitle(k)
		case tabsInitial:
			title = title[:1]
		case tabsOnlyShown:
			return ""
		}
	}
	label := strconv.Itoa(int(k)+1) + " " + title
	if k != b.active && style >= tabsBrief {
		return label
	}
	switch k {
	case nodesView:
		if b.snap.Mesh != nil {
			label += " " + strconv.Itoa(len(b.snap.Mesh.Nodes()))
		}
	case activityView, statsView:
	case allView: // its rows are made only while it is on screen
		label += " " + strconv.Itoa(len(b.all))
	default:
		label += " " + strconv.Itoa(len(b.panes[k].members))
	}
	return label
}

// shortTitle is the shortest prefix of at least 3 letters of k's title
// that no other view's title starts with: "Stal" and "Stat", never two
// tabs reading "Sta".
func shortTitle(k viewKind) string {
	title := views[k].title
	for n := 3; n < len(title); n++ {
		unique := true
		for o := range viewCount {
			if o != k && strings.HasPrefix(views[o].title, title[:n]) {
				unique = false
				break
			}
		}
		if unique {
			return title[:n]
		}
	}
	return title
}

// tabAt is the view whose tab is at column x of the top bar as laid out.
func (b *board) tabAt(x int, bar topBar) (viewKind, bool) {
	pos := 0
	if bar.name {
		pos = cells(appName) + 2
	}
	for k := range viewCount {
		label := b.tabLabelIn(k, bar.style)
		if label == "" {
			continue
		}
		w := cells(label)
		if x >= pos && x < pos+w {
			return k, true
		}
		pos += w + 2
	}
	return 0, false
}

// tabsWidth is the width of the tabs in a style, with the app's name or
// without.
func (b *board) tabsWidth(style tabStyle, name bool) int {
	w := 0
	if name {
		w = cells(appName) + 2
	}
	for k := range viewCount {
		if l := b.tabLabelIn(k, style); l != "" {
			w += cells(l) + 2
		}
	}
	return w
}

// tabLayout shares the top two lines. Every view's number, name and
// count come first: the alarm stays beside the tabs while the whole of it
// fits there with every count (whole titles, then three letters), and
// otherwise takes the second line whole, where the filter hint and the
// sort give way to it. The tabs then drop the app's name before any
// count, and lose counts only where even "2 Lea 5" does not fit.
func (m *Model) tabLayout() topBar {
	a := m.board.alarm(&m.screen)
	parts := a.parts
	room := m.screen.width - m.screen.flagsWidth(m.opts.ReadOnly, m.pace) - 1
	// The review count shows where it fits beside the tabs of a style and
	// the whole alarm; it never shortens them.
	tries := [][]string{parts}
	if a.review != "" {
		tries = [][]string{append(slices.Clip(parts), a.review), parts}
	}
	for _, style := range []tabStyle{tabsFull, tabsShort} {
		for _, try := range tries {
			if whole := strings.Join(try, alarmSep); m.board.tabsWidth(style, true)+cells(whole) <= room {
				return topBar{style: style, name: true, alarm: whole}
			}
		}
	}
	// Below, the alarm takes the flags with it: the tabs have the line.
	below := len(parts) > 0 || a.review != ""
	if below {
		room = m.screen.width - 1
	}
	for style := range tabStyles {
		for _, name := range []bool{true, false} {
			if m.board.tabsWidth(style, name) <= room {
				return topBar{style: style, name: name, below: below}
			}
		}
	}
	return topBar{style: tabsOnlyShown, below: below}
}

func (sc *screen) flagsWidth(readOnly bool, p pace) int {
	w := 0
	if readOnly {
		w += len(" READ-ONLY")
	}
	if sc.paused {
		w += len(" paused")
	}
	if p.sped() {
		w += 1 + cells(p.clockFlag())
	}
	return w
}

const alarmSep = " · "

// clockFlag says the tasks' clock runs faster than the wall clock (the
// demo's --speed), so no time on screen is taken for a wall-clock one.
func (p pace) clockFlag() string {
	return "clock ×" + strconv.FormatFloat(float64(p), 'f', -1, 64)
}

// alarmText is what is wrong anywhere, worst first, and how bad the
// worst of it is.
type alarmText struct {
	parts []string
	level model.Level // LevelNone: all quiet
	// review counts the tasks waiting for a reviewer: shown after the
	// parts where there is room.
	review string
}

// alarm names what needs a human, seen from every view: unreachable
// sources and DOWN nodes by name, then broken and stuck claims by rung,
// then how many tasks wait for a reviewer.
func (b *board) alarm(sc *screen) alarmText {
	var a alarmText
	raise := func(l model.Level) { a.level = max(a.level, min(l, model.LevelEscalated)) }
	// Names in the same state share their word ("PROD, STAGING
	// UNREACHABLE"), so that each is named in a narrow top bar.
	var words []string
	named := map[string][]string{}
	name := func(who, word string) {
		if _, ok := named[word]; !ok {
			words = append(words, word)
		}
		named[word] = append(named[word], strings.ToUpper(who))
	}
	// A source that does not answer hides everything else it holds.
	for i := range b.snap.Sources {
		src := &b.snap.Sources[i]
		switch {
		case src.Status == hub.StatusDegraded:
			name(src.Name, sourceWord(*src))
			raise(model.LevelEscalated)
		case sc.lagging(src, b.now()):
			name(src.Name, "LAGGING")
			raise(model.LevelUrgent)
		}
	}
	for _, n := range b.snap.Mesh.Nodes() {
		if n.Status == model.NodeDown {
			name(n.Name, "DOWN")
			raise(model.LevelEscalated)
		}
	}
	for _, w := range words {
		a.parts = append(a.parts, strings.Join(named[w], ", ")+" "+w)
	}
	for i := len(b.rungs) - 1; i >= 0; i-- { // a Level is unsigned
		if lv, n := model.Level(i), b.rungs[i]; n > 0 {
			a.parts = append(a.parts, strconv.Itoa(n)+" "+rungWord(lv))
			raise(lv)
		}
	}
	if n := b.reviews; n > 0 {
		a.review = strconv.Itoa(n) + " IN REVIEW"
	}
	return a
}

// fitAlarm keeps the worst parts that fit in width, counting the rest.
func fitAlarm(parts []string, width int) string {
	for n := len(parts); n > 0; n-- {
		s := strings.Join(parts[:n], alarmSep)
		if n < len(parts) {
			s += " +" + strconv.Itoa(len(parts)-n)
		}
		if cells(s) <= width {
			return s
		}
	}
	return ""
}

func (m *Model) tabs() string {
	st := m.styles
	bar := m.tabLayout()
	alarm := bar.alarm
	var b strings.Builder
	if bar.name {
		b.WriteString(st.Title.Render(appName))
		b.WriteString("  ")
	}
	for k := range viewCount {
		label := m.board.tabLabelIn(k, bar.style)
		switch {
		case label == "":
			continue
		case k == m.board.active:
			b.WriteString(st.TabActive.Render(label))
		default:
			b.WriteString(st.Tab.Render(label))
		}
		b.WriteString("  ")
	}
	var flags []string
	if alarm != "" {
		flags = append(flags, st.Level(int(m.board.alarm(&m.screen).level)).Render(alarm))
	}
	if !bar.below {
		flags = append(flags, m.screen.flags(m.styles, m.opts.ReadOnly, m.pace)...)
	}
	return joinRight(b.String(), strings.Join(flags, " "), m.screen.width)
}

// flags are the top bar's words on how the dashboard runs: read-only,
// paused, a sped-up clock.
func (sc *screen) flags(st *theme.Styles, readOnly bool, p pace) []string {
	var flags []string
	if readOnly {
		flags = append(flags, st.Warn.Render("READ-ONLY"))
	}
	if sc.paused {
		flags = append(flags, st.Warn.Render("paused"))
	}
	if p.sped() {
		flags = append(flags, st.Muted.Render(p.clockFlag()))
	}
	return flags
}

// alarmBelow is the second line when the alarm has it: the whole alarm
// (worst first, what the Queue should point at last), and the sort and
// count where they fit beside it. A filter or : line being typed keeps
// the left; the alarm then takes the right, its worst parts first.
func (m *Model) alarmBelow(typing string) string {
	st := m.styles
	a := m.board.alarm(&m.screen)
	parts := slices.Clip(a.parts)
	if a.review != "" {
		parts = append(parts, a.review)
	}
	style := st.Level(int(a.level))
	p := m.pane()
	if typing != "" {
		room := m.screen.width - cells(typing) - 2
		shown := strconv.Itoa(p.len()) + " shown"
		if whole := strings.Join(parts, alarmSep); cells(whole)+2+len(shown) <= room {
			return joinRight(typing, style.Render(whole)+"  "+st.Muted.Render(shown), m.screen.width)
		}
		return joinRight(typing, style.Render(fitAlarm(parts, max(room, 0))), m.screen.width)
	}
	whole := strings.Join(parts, alarmSep)
	flags := strings.Join(m.screen.flags(m.styles, m.opts.ReadOnly, m.pace), " ")
	fw := cells(flags)
	if fw > 0 {
		fw++
	}
	for _, right := range []string{"sort: " + p.sortName() + " · " + strconv.Itoa(p.len()) + " shown", "sort: " + p.sortName(), ""} {
		if cells(whole)+cells(right)+fw+2 <= m.screen.width {
			return joinRight(style.Render(whole), strings.TrimSpace(st.Muted.Render(right)+" "+flags), m.screen.width)
		}
	}
	return joinRight(style.Render(fitAlarm(parts, m.screen.width-fw-1)), flags, m.screen.width)
}

// stuckPointer sends a person on the Queue to the stuck claims: how many
// wait in Stale, and its key. "" elsewhere, or when nothing is stuck.
func (b *board) stuckPointer(k *KeyMap) string {
	n := len(b.panes[staleView].members)
	if b.active != queueView || n == 0 {
		return ""
	}
	word := "claims"
	if n == 1 {
		word = "claim"
	}
	return fmt.Sprintf(" → %d stuck %s waiting in %s: press %s", n, word, views[staleView].title, k.Views[staleView].Help().Key)
}
