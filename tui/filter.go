package tui

import (
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

func matchNode(n *model.Node, f model.Filter) bool {
	for _, tm := range f.Terms {
		var ok bool
		switch tm.Field {
		case "", "node":
			ok = model.ContainsFold(n.Name, tm.Value)
		case "state":
			ok = model.ContainsFold(n.Status.String(), tm.Value)
		default:
			continue // a task's field says nothing of a node
		}
		if ok == tm.Not {
			return false
		}
	}
	return true
}

func matchActivity(a *activity, f model.Filter) bool {
	for _, tm := range f.Terms {
		var ok bool
		switch tm.Field {
		case "source":
			ok = model.ContainsFold(a.Source, tm.Value)
		case "agent":
			ok = model.ContainsFold(a.Actor, tm.Value)
		case "":
			ok = model.ContainsFold(a.Task, tm.Value) || model.ContainsFold(a.What, tm.Value)
		default:
			continue // a task's standing says nothing of a past event
		}
		if ok == tm.Not {
			return false
		}
	}
	return true
}

// hayCache keeps each task's search text (key, title and id in lower
// case) for as long as the task is unchanged. The hub hands out the same
// *model.Task until a task changes, so a snapshot costs a lookup per task
// and a build per changed one. New texts are written into one buffer that
// becomes one string, so a first load of 100k tasks allocates once, not
// twice per task, and a keystroke reads the texts of a sorted pane in
// memory order.
type hayCache struct {
	text map[*model.Task]string // made when a free-text filter first needs it
	live int                    // tasks in the snapshot, as prune last saw them
	buf  []byte                 // lower-case texts being built, reused
	ends []int32                // where each built text ends in buf
	miss []int32                // rows whose text is not cached
	// touched keeps fill's touching loop from being optimized away.
	touched byte
}

// fill gives every row its search text.
func (c *hayCache) fill(rows []row) {
	if c.text == nil {
		// Sized for as many texts as prune lets it hold: no growth between.
		c.text = make(map[*model.Task]string, 2*max(c.live, len(rows))+1024)
	}
	buf, ends, miss := c.buf[:0], c.ends[:0], c.miss[:0]
	for i := range rows {
		if s, ok := c.text[rows[i].t]; ok {
			rows[i].hay = s
			continue
		}
		miss = append(miss, int32(i))
	}
	// New tasks lie all over the heap. Building a text is long enough that
	// the processor waits for each task's cache misses in turn, so a short
	// loop first touches the strings of a block of tasks, letting their
	// misses overlap, and the texts are then built from the cache.
	var fields [hayBlock][3]string
	var touched byte
	for at := 0; at < len(miss); at += hayBlock {
		block := miss[at:min(at+hayBlock, len(miss))]
		for k, i := range block {
			t := rows[i].t
			fields[k] = [3]string{t.Key, t.Title, t.ID}
		}
		for k := range block {
			for _, f := range fields[k] {
				if len(f) > 0 {
					touched ^= f[0] ^ f[len(f)-1]
				}
			}
		}
		for _, i := range block {
			buf = model.AppendSearchText(buf, rows[i].t)
			ends = append(ends, int32(len(buf)))
		}
	}
	c.touched = touched
	if len(miss) > 0 {
		all := string(buf)
		start := int32(0)
		for k, i := range miss {
			s := all[start:ends[k]]
			rows[i].hay = s
			c.text[rows[i].t] = s
			start = ends[k]
		}
	}
	c.buf, c.ends, c.miss = buf[:0], ends[:0], miss[:0]
	if cap(c.buf) > 1<<20 && len(miss) < 1024 {
		c.buf = nil // a first load's buffer is not kept for small polls
	}
}

// hayBlock is how many new tasks fill touches ahead of building their
// texts.
const hayBlock = 64

// prune drops the texts of tasks that are gone once they outnumber the
// live ones, and copies the live ones into one fresh buffer: a text keeps
// its whole buffer alive, so without the copy a few long-lived tasks would
// pin every buffer ever built.
func (c *hayCache) prune(live []*model.Task) {
	c.live = len(live)
	if len(c.text) <= 2*len(live)+1024 {
		return
	}
	n := 0
	for _, t := range live {
		n += len(c.text[t])
	}
	var b strings.Builder
	b.Grow(n)
	for _, t := range live {
		b.WriteString(c.text[t])
	}
	all := b.String()
	fresh := make(map[*model.Task]string, 2*len(live)+1024) // no growth before the next prune
	start := 0
	for _, t := range live {
		s, ok := c.text[t]
		if !ok {
			continue
		}
		fresh[t] = all[start : start+len(s)]
		start += len(s)
	}
	c.text = fresh
}
