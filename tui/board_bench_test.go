package tui

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"charm.land/bubbles/v2/table"
	tea "charm.land/bubbletea/v2"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/theme"
)

// bigQueue is a snapshot of n tasks over two sources, mixed the way a busy
// queue is: 60 % waiting, 25 % claimed (some stale), 15 % finished, in the
// random order the hub's maps hand them out.
func bigQueue(n int, rng *rand.Rand) hub.Snapshot {
	agents := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	var srcs [2][]*model.Task
	for i := range n {
		t := &model.Task{Source: "prod", ID: strconv.Itoa(i), Key: "TASK-" + strconv.Itoa(i),
			Title: "Rotate the certificates of service " + strconv.Itoa(i%977) + " in region eu-west",
			Class: model.Class(1 + rng.IntN(4)), Priority: rng.IntN(5),
			CreatedAt: model.StampOf(t0.Add(-time.Duration(rng.IntN(72*60)) * time.Minute)), State: model.StateQueued}
		t.EditedAt = t.CreatedAt
		if i%2 == 1 {
			t.Source = "staging"
		}
		switch r := rng.IntN(100); {
		case r < 25:
			a := agents[rng.IntN(len(agents))]
			t.State = model.StateClaimed
			t.SetClaim(model.Claim{Holder: model.HolderAgent, Name: a, RunID: "r-" + strconv.Itoa(i), Node: "n" + strconv.Itoa(i%5),
				ClaimedAt: model.StampOf(t0.Add(-time.Duration(rng.IntN(180)) * time.Minute))})
			t.EditClaim().HeartbeatAt = model.StampOf(t.Claim().ClaimedAt.Time().Add(time.Duration(rng.IntN(10)) * time.Minute))
			t.EditClaim().Expires = model.StampOf(t.Claim().HeartbeatAt.Time().Add(20 * time.Minute))
		case r < 40:
			t.State = model.StateDone
		}
		srcs[i%2] = append(srcs[i%2], t)
	}
	s := hub.Snapshot{Seq: 1, At: t0, Policy: model.DefaultPolicy()}
	for i, name := range []string{"prod", "staging"} {
		s.Sources = append(s.Sources, hub.SourceState{Name: name, Status: hub.StatusOK, Updated: t0, Tasks: hub.TasksOf(srcs[i])})
	}
	return s
}

// benchModel is a 120×40 dashboard holding a 100k snapshot.
func benchModel(b *testing.B) (*Model, hub.Snapshot) {
	b.Helper()
	s := bigQueue(100_000, rand.New(rand.NewPCG(1, 2)))
	h := hub.New(hub.Config{})
	m, err := New(Options{Hub: h, Now: func() time.Time { return t0 }, Location: time.UTC,
		Styles: theme.New(theme.Options{Mode: theme.Dark})})
	if err != nil {
		b.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(snapshotMsg(s))
	return m, s
}

func BenchmarkView100k(b *testing.B) {
	for _, v := range []viewKind{queueView, leasesView, staleView} {
		b.Run(views[v].title, func(b *testing.B) {
			m, _ := benchModel(b)
			m.show(v)
			m.pane().grid.Select(5000)
			b.ResetTimer()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkCursorMove100k is one keypress as the user feels it: Update
// and the frame it causes.
func BenchmarkCursorMove100k(b *testing.B) {
	m, _ := benchModel(b)
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	up := tea.KeyPressMsg{Code: tea.KeyUp}
	i := 0
	b.ResetTimer()
	cpu := startCPU(b)
	for b.Loop() {
		msg := down
		if i/1000%2 == 1 {
			msg = up
		}
		i++
		m.Update(msg)
		_ = m.View()
	}
	cpu.report()
}

// BenchmarkBubblesTableMove100k is bubbles/table doing the same, for
// comparison in the same run.
func BenchmarkBubblesTableMove100k(b *testing.B) {
	_, s := benchModel(b)
	rows := make([]table.Row, 0, 100_000)
	for _, src := range s.Sources {
		for t := range src.Tasks.All() {
			rows = append(rows, table.Row{t.Source, t.DisplayKey(), t.Title, t.Class.String(), model.PriorityName(t.Priority), ago(t.CreatedAt.Time(), t0)})
		}
	}
	tb := table.New(table.WithColumns([]table.Column{{Title: "SOURCE", Width: 8}, {Title: "KEY", Width: 10}, {Title: "TITLE", Width: 50},
		{Title: "CLASS", Width: 10}, {Title: "PRI", Width: 8}, {Title: "AGE", Width: 4}}), table.WithRows(rows), table.WithHeight(34), table.WithFocused(true))
	b.ResetTimer()
	for b.Loop() {
		tb.MoveDown(1)
		_ = tb.View()
	}
}

// BenchmarkApplySnapshot100k takes a fresh 100k snapshot: merge,
// classify, sort the view on screen, filter. "poll" is the usual case, a
// poll that changed 1,000 tasks (the hub keeps the others' records, full
// reconciles included); "all-new" has every record new, as on a first
// load. Each with and without a free-text filter.
func BenchmarkApplySnapshot100k(b *testing.B) {
	for _, c := range []struct {
		name    string
		changed int
		filter  string
	}{{"poll/filter", 1000, "service"}, {"poll/no-filter", 1000, ""}, {"all-new/filter", 100_000, "service"}, {"all-new/no-filter", 100_000, ""}} {
		b.Run(c.name, func(b *testing.B) {
			m, s := benchModel(b)
			m.input.filter.SetValue(c.filter)
			m.refilter()
			rng := rand.New(rand.NewPCG(3, 4))
			applyEach(b, m, func() hub.Snapshot { return changedSnapshot(s, rng, c.changed, true) })
			b.StopTimer()
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
			runtime.KeepAlive(m)
		})
	}
}

// BenchmarkFilterKeystroke100k alternates typing a letter (narrowing: the
// rows on screen are searched) and deleting it (widening: all of them).
// The standing cases run on the Leases view, where a node: word places
// every running claim on the mesh.
func BenchmarkFilterKeystroke100k(b *testing.B) {
	for _, c := range []struct {
		name, base string
		view       viewKind
	}{
		{"text", "servic", queueView}, {"field", "agent:al", queueView},
		{"standing", "level<urgent age>5m prio>=1 node:n", leasesView}, {"negated", "!agent:al !servic", leasesView},
	} {
		b.Run(c.name, func(b *testing.B) {
			m, _ := benchModel(b)
			m.show(c.view)
			m.Update(keyMsgs(b, "/")[0])
			for _, r := range c.base {
				m.Update(keyMsgs(b, string(r))[0])
			}
			keys := []tea.KeyPressMsg{keyMsgs(b, "e")[0], keyMsgs(b, "backspace")[0]}
			i := 0
			b.ResetTimer()
			cpu := startCPU(b)
			for b.Loop() {
				m.Update(keys[i%2])
				i++
			}
			cpu.report()
			b.StopTimer()
			if got := fmt.Sprint(m.input.filter.Value()); got != c.base && got != c.base+"e" {
				b.Fatalf("filter is %q", got)
			}
		})
	}
}

// BenchmarkPollBulkLoaded100k is a poll that changed 200 tasks of a queue
// loaded in bulk: every task created in the same second, so the pull
// order's ties run to thousands and their tie-breaks (source, then id)
// order most of the view at each poll, as they do under agents at work on
// such a queue (BenchmarkResidentUnderChange's). B/op is the figure: what
// each poll leaves for the collector.
func BenchmarkPollBulkLoaded100k(b *testing.B) {
	m, s := benchModel(b)
	for _, src := range s.Sources {
		for t := range src.Tasks.All() {
			t.CreatedAt, t.EditedAt, t.Priority = model.StampOf(t0), model.StampOf(t0), 2
		}
	}
	m.Update(snapshotMsg(s))
	rng := rand.New(rand.NewPCG(5, 6))
	b.ReportAllocs()
	applyEach(b, m, func() hub.Snapshot { return changedSnapshot(s, rng, 200, false) })
}

// applyEach times the dashboard applying one fresh snapshot per round;
// making the next one is not timed.
func applyEach(b *testing.B, m *Model, fresh func() hub.Snapshot) {
	next := fresh()
	b.ResetTimer()
	cpu := startCPU(b)
	for b.Loop() {
		m.Update(snapshotMsg(next))
		b.StopTimer()
		cpu.stop()
		next = fresh()
		cpu.resume()
		b.StartTimer()
	}
	cpu.report()
}

// changedSnapshot is s with changed of its tasks in new versions, spread
// over its sources (every task when changed is all of them), each list
// shuffled as the hub's maps hand them out when shuffle is set.
func changedSnapshot(s hub.Snapshot, rng *rand.Rand, changed int, shuffle bool) hub.Snapshot {
	n := s
	n.Sources = append([]hub.SourceState(nil), s.Sources...)
	for i := range n.Sources {
		ts := n.Sources[i].Tasks.AppendTo(nil)
		for k := range changed / len(n.Sources) {
			j := k
			if changed < 100_000 {
				j = rng.IntN(len(ts))
			}
			copied := *ts[j]
			copied.Version = strconv.Itoa(rng.Int())
			ts[j] = &copied
		}
		if shuffle {
			rng.Shuffle(len(ts), func(a, z int) { ts[a], ts[z] = ts[z], ts[a] })
		}
		n.Sources[i].Tasks = hub.TasksOf(ts)
	}
	return n
}
