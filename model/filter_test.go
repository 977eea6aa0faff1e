package model

import (
	"strings"
	"testing"
	"time"
)

func TestContainsFoldAgreesWithLowerAndContains(t *testing.T) {
	for _, s := range []string{"", "Rotate TLS", "tls", "xTlS", "Ünïcode TLS", "aaaab", "SERVICE service", "ab"} {
		for _, sub := range []string{"", "t", "tls", "s", "aab", "ünï", "ervice", "b", "abc"} {
			want := strings.Contains(strings.ToLower(s), sub)
			if got := ContainsFold(s, sub); got != want {
				t.Errorf("ContainsFold(%q, %q) = %v, want %v", s, sub, got, want)
			}
		}
	}
}

// FuzzContainsFold holds ContainsFold to its definition for any text and
// any word a filter can hold (lower case, as ParseFilter leaves it).
func FuzzContainsFold(f *testing.F) {
	for _, c := range [][2]string{{"Rotate TLS", "tls"}, {"\u212a-1", "k"}, {"\xc3\u00e9", "\u00e9"}, {"S\xffs", "s"}, {"İ", "i"}, {"aaaab", "aab"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, word string) {
		sub := strings.ToLower(word)
		if want := strings.Contains(strings.ToLower(s), sub); ContainsFold(s, sub) != want {
			t.Fatalf("ContainsFold(%q, %q) = %v, want %v", s, sub, !want, want)
		}
	})
}

func mustFilter(t testing.TB, s string) Filter {
	t.Helper()
	f, err := ParseFilter(s)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", s, err)
	}
	return f
}

func TestNarrowingIsOnlyClaimedWhenItHolds(t *testing.T) {
	for _, c := range []struct {
		prev, next string
		want       bool
	}{
		{"tl", "tls", true}, {"agent:a", "agent:al node:n", true}, {"agent", "agent:", false}, {"tls", "tl", false}, {"", "x", true},
		{"!tl", "!tls", false}, // a longer negated word lets more through
		{"age>1m", "age>10m", false}, {"level>=stale", "level>=stale !x", true}, {"prio>=1", "prio>=high", false},
	} {
		if got := mustFilter(t, c.next).Narrows(mustFilter(t, c.prev)); got != c.want {
			t.Errorf("narrows(%q → %q) = %v, want %v", c.prev, c.next, got, c.want)
		}
	}
}

// TestBadFiltersNameWhatToFix: every refusal quotes the word and says what
// would be accepted there.
func TestBadFiltersNameWhatToFix(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"level>=urgnt", `"level>=urgnt": unknown level "urgnt" (want stale, urgent, notify or escalated)`},
		{"level>=", `unknown level ""`},
		{"age>30x", `"age>30x": unknown duration "30x" (want e.g. 90s, 30m, 2h or 1d)`},
		{"age>-5m", `unknown duration "-5m"`},
		{"prio>=hgh", `"prio>=hgh": unknown priority "hgh"`},
		{"prio>", `no priority`},
		{"agnet:bot", `"agnet:bot": unknown field "agnet" (want one of agent, state, source, node, level, age, stuck, prio)`},
		{"agent>=bot", `"agent>=bot": agent is text, compare it with agent:`},
		{"tls !", `"!" needs a word after it`},
	} {
		_, err := ParseFilter(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseFilter(%q) = %v, want an error containing %s", c.in, err, c.want)
		}
	}
}

// TestFilterMatches is the language as an operator reads it, over one
// node's claims at three rungs of the ladder, a queued task and a hand-off.
func TestFilterMatches(t *testing.T) {
	p := DefaultPolicy()
	mesh := NewMesh([]Node{{Name: "ORACLE_LOCAL", Status: NodeHealthy}}, map[string]string{"worker-9": "oracle_local"})
	now := t0
	claim := func(id, agent, node string, silent time.Duration, prio int) *Task {
		c := agentClaim(agent, now.Add(-silent), now.Add(-silent+10*time.Minute))
		c.Node = node
		return (&Task{Source: "sqlite", ID: id, Key: strings.ToUpper(id), Title: "Rotate TLS " + id, State: StateClaimed, RawStatus: "In Progress",
			Priority: prio, CreatedAt: StampOf(now.Add(-silent - time.Hour))}).WithClaim(c)
	}
	tasks := []*Task{
		claim("a", "worker-7", "ORACLE_LOCAL", 5*time.Minute, PriorityHigh), // running lease
		claim("b", "worker-8", "ORACLE_LOCAL", 25*time.Minute, PriorityLow), // stale
		claim("c", "worker-9", "", 90*time.Minute, PriorityCritical),        // notify, placed by holder mapping
		claim("d", "worker-1", "SANDMAN", 45*time.Minute, PriorityMedium),   // urgent elsewhere
		{Source: "locks", ID: "e", Key: "E", Title: "Write docs", State: StateQueued, CreatedAt: StampOf(now.Add(-10 * time.Minute))},
		{Source: "locks", ID: "f", Key: "F", Title: "Hand over", State: StateQueued, more: &More{Reservation: &Reservation{For: "worker-2", Until: now.Add(time.Hour)}}},
	}
	for _, c := range []struct{ filter, want string }{
		{"", "a b c d e f"},
		{"node:oracle_local", "a b c"},
		{"node:ORACLE_LOCAL level>=stale", "b c"},
		{"node:oracle_local !level>=stale", "a"},
		{"level>=urgent", "c d"},
		{"level:urgent", "d"},
		{"level<urgent state:claimed", "a b"},
		{"stuck>30m", "c d"},
		{"age>30m", "a b c d"},
		{"age<=10m", "e"},
		{"prio>=high", "a c"},
		{"prio<2", "b e f"},
		{"agent:worker-2", "f"},
		{"state:q", "e f"},
		{"state:progress", "a b c d"},
		{"source:lock !docs", "f"},
		{"tls !agent:worker-7", "b c d"},
		{"ROTATE", "a b c d"},
	} {
		f := mustFilter(t, c.filter)
		var got []string
		for _, task := range tasks {
			cl := Classify(task, now, p, mesh)
			if f.Match(task, &cl, now) {
				got = append(got, task.ID)
			}
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%q matches %q, want %q", c.filter, g, c.want)
		}
	}
}

// TestTodaysWordsStayText: words that were free text before fields existed
// still are (a time of day, an arrow), and so are the prefixes unfinished.
func TestTodaysWordsStayText(t *testing.T) {
	for _, w := range []string{"10:30", "->", "agent", "level", "state"} {
		f := mustFilter(t, w)
		if len(f.Terms) != 1 || f.Terms[0].Field != "" || f.Terms[0].Value != w {
			t.Errorf("%q parsed as %+v, want free text", w, f.Terms)
		}
	}
}

// FuzzParseFilter: any expression either parses, and then matches without
// panicking and narrows itself, or is refused with a message that quotes
// what to fix.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"", "tls", "node:ORACLE_LOCAL level>=stale", "!agent:bot age>30m prio>=high", "stuck<=1h30m level:escalated",
		"age>2d", "!", "level>=", "x:y", "10:30", "prio>=-3", "state:done !source:notion", "age>9999999d", "level>==stale", "a<>b"} {
		f.Add(s)
	}
	task := (&Task{Source: "s", ID: "1", Key: "K-1", Title: "Rotate TLS", State: StateClaimed, Priority: 3,
		CreatedAt: StampOf(t0.Add(-time.Hour))}).WithClaim(agentClaim("worker-7", t0.Add(-time.Hour), t0.Add(-time.Minute)))
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "filter: ") || len(flt.Terms) != 0 {
				t.Fatalf("ParseFilter(%q): %v with %d terms", s, err, len(flt.Terms))
			}
			return
		}
		c := Classify(task, t0, DefaultPolicy(), nil)
		flt.Match(task, &c, t0)
		if !flt.Narrows(flt) {
			t.Fatalf("%q does not narrow itself", s)
		}
	})
}

// FuzzFreeWords: a free word matches a task when the key, the title or the
// id holds it in lower case — in any script, and never across two fields.
func FuzzFreeWords(f *testing.F) {
	for _, s := range [][4]string{{"tls", "K-1", "Rotate TLS", "1"}, {"k-1", "K-1", "x", "9"}, {"Straße", "", "STRASSE straße", "p"},
		{"1 rotate", "K-1", "Rotate", "1"}, {"e-r", "ke", "rotate", "i"}, {"\u212a", "\u212a-1", "", ""}, {"ab", "a", "b", "ab"}, {"a\x00b", "a", "b", ""}} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, filter, key, title, id string) {
		flt, err := ParseFilter(filter)
		if err != nil {
			return
		}
		task := &Task{Source: "s", ID: id, Key: key, Title: title, State: StateQueued}
		want := true
		for _, tm := range flt.Terms {
			if tm.Field != "" {
				return // other fields: FuzzParseFilter's business
			}
			in := false
			for _, s := range []string{key, title, id} {
				in = in || strings.Contains(strings.ToLower(s), tm.Value)
			}
			want = want && in != tm.Not
		}
		var c Classification
		if got := flt.Match(task, &c, t0); got != want {
			t.Fatalf("%q on key %q title %q id %q: %v, want %v", filter, key, title, id, got, want)
		}
	})
}

// The README's saved filter: alpha's tasks that are not done. A bare word
// is text, so `!done` would keep a done task whose title lacks the word.
func TestReadmeFilterAlphaNotDone(t *testing.T) {
	f, err := ParseFilter("agent:alpha !state:done")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	none := func(*Task) Classification { return Classification{} }
	held := (&Task{ID: "1", Title: "index", State: StateClaimed}).WithClaim(Claim{Holder: HolderAgent, Name: "alpha"})
	done := (&Task{ID: "2", Title: "index", State: StateDone}).WithClaim(Claim{Holder: HolderAgent, Name: "alpha"})
	if got := f.Select([]*Task{held, done}, none, now); len(got) != 1 || got[0] != held {
		t.Fatalf("agent:alpha !state:done selected %v, want only the claimed task", got)
	}
	text, _ := ParseFilter("agent:alpha !done")
	if got := text.Select([]*Task{held, done}, none, now); len(got) != 2 {
		t.Fatalf("agent:alpha !done selected %d, want both: done is text there", len(got))
	}
}
