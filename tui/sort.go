package tui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// sortTasks orders a task pane by its column sort or else its chosen preset.
// The Queue's first preset is exactly the model's pull order.
func (p *pane) sortTasks(classes func() map[*model.Task]model.Classification) {
	t := p.members
	if g := &p.grid; g.sortCol >= 0 {
		p.sortColumn(model.Order{Field: g.cols[g.sortCol].field, Desc: g.desc})
		return
	}
	switch p.kind {
	case queueView:
		switch p.sort {
		case 0:
			p.sortPullOrder()
		case 1:
			slices.SortStableFunc(t, by(func(a, b *model.Task) int { return a.CreatedAt.Time().Compare(b.CreatedAt.Time()) }))
		default:
			slices.SortStableFunc(t, by(func(a, b *model.Task) int { return b.CreatedAt.Time().Compare(a.CreatedAt.Time()) }))
		}
	case leasesView:
		switch p.sort {
		case 0:
			slices.SortFunc(t, by(func(a, b *model.Task) int { return cmp.Or(leftCompare(a, b), refCompare(a, b)) }))
		case 1:
			slices.SortFunc(t, by(func(a, b *model.Task) int {
				return cmp.Or(a.Claim().ClaimedAt.Time().Compare(b.Claim().ClaimedAt.Time()), refCompare(a, b))
			}))
		default:
			slices.SortFunc(t, by(func(a, b *model.Task) int {
				return cmp.Or(strings.Compare(a.Claim().Name, b.Claim().Name), refCompare(a, b))
			}))
		}
	case staleView:
		p.sortStale(classes()) // indexed only for the view that reads it
	case parkedView:
		switch p.sort {
		case 0:
			slices.SortFunc(t, by(func(a, b *model.Task) int { return cmp.Or(reviewFirst(a, b), nextCheckCompare(a, b), refCompare(a, b)) }))
		case 1:
			slices.SortFunc(t, by(func(a, b *model.Task) int {
				return cmp.Or(a.EditedAt.Time().Compare(b.EditedAt.Time()), refCompare(a, b))
			}))
		default:
			slices.SortFunc(t, by(func(a, b *model.Task) int { return cmp.Or(cmp.Compare(a.State, b.State), refCompare(a, b)) }))
		}
	case allView:
		switch p.sort {
		case 0:
			slices.SortFunc(t, by(func(a, b *model.Task) int { return cmp.Or(cmp.Compare(a.State, b.State), model.PullCompare(a, b)) }))
		case 1:
			slices.SortFunc(t, by(func(a, b *model.Task) int {
				return cmp.Or(b.CreatedAt.Time().Compare(a.CreatedAt.Time()), refCompare(a, b))
			}))
		default:
			slices.SortFunc(t, by(model.PullCompare))
		}
	}
}

// reviewFirst puts the tasks waiting for a reviewer on top, the one
// waiting longest (edited longest ago) first.
func reviewFirst(a, b *model.Task) int {
	ra, rb := a.State == model.StateReview, b.State == model.StateReview
	switch {
	case ra && rb:
		return a.EditedAt.Time().Compare(b.EditedAt.Time())
	case ra:
		return -1
	case rb:
		return 1
	}
	return 0
}

// sortStale orders the Stale pane by its chosen preset.
func (p *pane) sortStale(class map[*model.Task]model.Classification) {
	t := p.members
	switch p.sort {
	case 0:
		slices.SortFunc(t, by(func(a, b *model.Task) int {
			ca, cb := class[a], class[b]
			return cmp.Or(cmp.Compare(severity(cb), severity(ca)), cmp.Compare(cb.Stuck, ca.Stuck), refCompare(a, b))
		}))
	case 1:
		slices.SortFunc(t, by(func(a, b *model.Task) int {
			return cmp.Or(cmp.Compare(class[b].Stuck, class[a].Stuck), refCompare(a, b))
		}))
	default:
		slices.SortFunc(t, by(refCompare))
	}
}

// nextCheckCompare puts the parked task due to be looked at first on top;
// those with no next check go last.
func nextCheckCompare(a, b *model.Task) int {
	na, nb := a.NextCheckAt(), b.NextCheckAt()
	switch {
	case na.IsZero() && nb.IsZero():
		return 0
	case na.IsZero():
		return 1
	case nb.IsZero():
		return -1
	}
	return na.Compare(nb)
}

// pullKey packs a task's pull-order fields into one integer (class rank,
// inverted priority, edit second) so that sorting 100k tasks is mostly one
// integer compare in a small slice instead of chasing task pointers; idx
// says which member it was. sub, id0 and id1 are the next tie-breaks,
// packed too (the edit's microsecond and the source's rank among the
// pane's sources, the id's first 16 bytes), so that the radix sort orders
// a queue loaded in bulk — runs of thousands of equal keys — and only ids
// sharing 16 bytes are compared. A column sort packs its sub-second part
// in sub, all 32 bits of it, and leaves the ids zero.
//
// It is 32 bytes: a buffer of them is held for a queue of 100,000 while
// its tasks change, so every 8 bytes are 0.8 MB of heap, and twice that
// of the collector's goal.
type pullKey struct {
	key      uint64
	id0, id1 uint64
	sub      uint32
	idx      int32
}

// Field widths of pullKey.key: rank in the top 3 bits, then 16 bits of
// priority, then 45 bits of seconds (offset so that year 1 fits). sub
// holds the edit's microsecond (a model.Stamp has no finer part) above the
// source's rank.
const (
	prioBits  = 16
	secBits   = 45
	maxPrio   = 1<<(prioBits-1) - 1
	secOffset = 1 << (secBits - 1)
	rankBits  = 12
	maxRanks  = 1 << rankBits
)

// pack makes a task's pull key, or reports that its values do not fit or
// its source has no rank.
func pack(t *model.Task, idx int, ranks sourceRanks) (pullKey, bool) {
	sec := t.EditedAt.Time().Unix() + secOffset
	src, ranked := ranks[t.Source]
	if !ranked || t.Priority < -maxPrio || t.Priority > maxPrio || sec < 0 || sec >= 1<<secBits {
		return pullKey{}, false
	}
	k := uint64(t.Class.Rank())<<(prioBits+secBits) | uint64(maxPrio-t.Priority)<<secBits | uint64(sec)
	micro := uint32(t.EditedAt.Time().Nanosecond() / 1000)
	return pullKey{key: k, sub: micro<<rankBits | uint32(src), idx: int32(idx),
		id0: bigEndian(t.ID), id1: bigEndian(t.ID[min(8, len(t.ID)):])}, true
}

// sourceRanks are source names in strings.Compare's order, the order of
// PullCompare's first tie-break.
type sourceRanks map[string]uint16

// rankSources ranks the sources names (duplicates allowed); more than
// maxRanks ranks none, and every pack then fails over to PullCompare.
func rankSources(names []string) sourceRanks {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	ranks := make(sourceRanks, len(names))
	if len(names) > maxRanks {
		return ranks
	}
	for i, n := range names {
		ranks[n] = uint16(i)
	}
	return ranks
}

// sortPullOrder sorts the members in exactly model.PullCompare's order:
// the same keys, and PullCompare itself for the last tie-breaks. Values the
// packing cannot hold (absurd priorities or dates) fall back to PullCompare.
func (p *pane) sortPullOrder() {
	members := p.members
	keys := p.keys
	if !p.packed || len(keys) != len(members) {
		keys = slices.Grow(keys[:0], len(members))
		names := make([]string, 0, 4)
		for _, r := range members {
			if n := len(names); n == 0 || names[n-1] != r.t.Source {
				names = append(names, r.t.Source)
			}
		}
		ranks := rankSources(names)
		for i, r := range members {
			k, ok := pack(r.t, i, ranks)
			if !ok {
				slices.SortFunc(members, by(model.PullCompare))
				return
			}
			keys = append(keys, k)
		}
	}
	p.packed = false // the members are about to move
	p.reorder(keys)
}

// sortColumn sorts the members in exactly o.Compare's order: a number or
// time field by packed keys, as the pull order is, a text field by
// comparison.
func (p *pane) sortColumn(o model.Order) {
	members := p.members
	if len(members) == 0 {
		return
	}
	if _, _, ok := o.Field.Number(members[0].t); !ok {
		p.sortText(o)
		return
	}
	keys := slices.Grow(p.keys[:0], len(members))
	for i, r := range members {
		n, ns, _ := o.Field.Number(r.t)
		// Sign bits flipped, so the radix sort's unsigned order is the
		// numbers' order; every bit flipped for descending.
		k, s := uint64(n)^1<<63, uint32(ns)^1<<31
		if o.Desc {
			k, s = ^k, ^s
		}
		keys = append(keys, pullKey{key: k, sub: s, idx: int32(i)})
	}
	p.packed = false
	p.reorder(keys)
}

// textKey is a row's sort key for a text column (model.AppendSortKey),
// cut from one buffer per sort, and the row it came from.
type textKey struct {
	key string
	idx int32
}

// sortText sorts the members in exactly o.Compare's order by a text field:
// each row's key is made once, into one buffer, so that the sort compares
// bytes laid side by side (strings.Compare) instead of folding two titles
// spread over the heap at every comparison. Equal keys are equal values:
// their order is Compare's tie-breaks.
func (p *pane) sortText(o model.Order) {
	members := p.members
	buf := p.textBuf[:0]
	ends := make([]int, 0, len(members))
	for _, r := range members {
		s, fold := o.Field.Text(r.t)
		buf = model.AppendSortKey(buf, s, fold)
		ends = append(ends, len(buf))
	}
	all := string(buf) // one allocation; the keys are its substrings
	keys := make([]textKey, len(members))
	start := 0
	for i, end := range ends {
		keys[i] = textKey{key: all[start:end], idx: int32(i)}
		start = end
	}
	slices.SortFunc(keys, func(a, b textKey) int {
		c := strings.Compare(a.key, b.key)
		if o.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		x, y := members[a.idx].t, members[b.idx].t
		return cmp.Or(strings.Compare(x.Source, y.Source), strings.Compare(x.ID, y.ID))
	})
	order := slices.Grow(p.keys[:0], len(keys))
	for _, k := range keys {
		order = append(order, pullKey{idx: k.idx})
	}
	permute(members, order)
	p.keys, p.packed = order, false
	if cap(buf) <= maxKeptText {
		p.textBuf = buf[:0]
	} else {
		p.textBuf = nil // a 100k sort's keys are not held between sorts
	}
}

// maxKeptText is the most key bytes a pane keeps for its next text sort.
const maxKeptText = 64 << 10

// reorder puts the members in the order of their packed keys, runs of
// equal keys by source, then id.
func (p *pane) reorder(keys []pullKey) {
	members := p.members
	radixSort(keys)
	// Equal keys are equal in every field they pack: the last tie-breaks
	// (source, then id, for PullCompare and model.Order alike) order each
	// run of them after the sort, so that the sort itself never reads a task.
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].key == keys[i].key && keys[j].sub == keys[i].sub && keys[j].id0 == keys[i].id0 && keys[j].id1 == keys[i].id1 {
			j++
		}
		if j-i > 1 {
			p.ties = sortTies(keys[i:j], members, p.ties)
		}
		i = j
	}
	permute(members, keys)
	p.keys = keys
}

// permute puts members in keys' order, in place: members[keys[i].idx]
// moves to i. It follows each cycle of the permutation, marking a key
// done by pointing it at its own place, so it needs no second slice of
// rows (1.2 MB held for a queue of 75,000 while its tasks change). It
// writes over the keys' idx.
func permute(members []row, keys []pullKey) {
	for i := range keys {
		if int(keys[i].idx) == i {
			continue
		}
		held := members[i]
		j := i
		for {
			k := int(keys[j].idx)
			keys[j].idx = int32(j)
			if k == i {
				members[j] = held
				break
			}
			members[j] = members[k]
			j = k
		}
	}
}

// maxKeptSort is the most rows a pane keeps sort buffers for while its
// tasks stand still. A view of 100,000 tasks keeps up to 11 MB of them (a
// pull-key buffer, 3.2 MB, and the ties, 8 MB when the whole view ties)
// and of a million ten times that. While tasks change they are reused at
// every poll, allocating nothing (made anew for each sort they cost
// processor time and no memory: the collector met them live in the sort);
// once the tasks stand still (a snapshot changes none, or a load has
// finished) the board lets them go until the next change.
const maxKeptSort = 4096

// releaseSortBuffers lets go of the sort buffers of a pane past
// maxKeptSort.
func (p *pane) releaseSortBuffers() {
	if cap(p.keys) > maxKeptSort {
		p.keys, p.packed = nil, false
	}
	if cap(p.ties) > maxKeptSort {
		p.ties = nil
	}
}

// tie is a task whose pull key equals others': what PullCompare's last
// tie-breaks read (source, then id), with the id's first 16 bytes packed
// so that most comparisons are two integer compares.
type tie struct {
	source, id string
	id0, id1   uint64
	key        pullKey
}

// sortTies orders a run of equal pull keys by source, then id. A queue
// loaded in bulk has runs of thousands (one timestamp, one priority), so
// each task is read once, not at every comparison.
//
// buf is kept between sorts, pointers cleared: a queue loaded in bulk
// re-sorts its runs of thousands at every poll while agents work, and a
// buffer made anew each time was most of what the dashboard allocated under
// change (1.1 GB in 40 s at 100,000 tasks and 200 changes a second).
func sortTies(run []pullKey, members []row, buf []tie) []tie {
	if cap(buf) < len(run) {
		buf = make([]tie, 0, len(run))
	}
	buf = buf[:0]
	for _, k := range run {
		t := members[k.idx].t
		buf = append(buf, tie{source: t.Source, id: t.ID, id0: bigEndian(t.ID), id1: bigEndian(t.ID[min(8, len(t.ID)):]), key: k})
	}
	slices.SortFunc(buf, func(a, b tie) int {
		switch {
		case a.source != b.source: // one source, one string: no byte compared
			return strings.Compare(a.source, b.source)
		case a.id0 != b.id0:
			return cmp.Compare(a.id0, b.id0)
		case a.id1 != b.id1:
			return cmp.Compare(a.id1, b.id1)
		}
		return strings.Compare(a.id, b.id)
	})
	for i := range buf {
		run[i] = buf[i].key
	}
	clear(buf) // kept for its capacity, not for the tasks' strings
	return buf
}

// bigEndian packs s's first 8 bytes, zero-padded: unequal packs order as
// strings.Compare orders the strings; equal ones say nothing.
func bigEndian(s string) uint64 {
	var v uint64
	for i := range 8 {
		v <<= 8
		if i < len(s) {
			v |= uint64(s[i])
		}
	}
	return v
}

// radixSort sorts keys by key, then sub, then id0 and id1, in place. It
// is a most-significant-byte radix sort (American flag sort): no task
// read, one pass to find the bytes that differ among the keys, then for
// each such byte a count and a pass that swaps each key into its bucket,
// and the same within every bucket on the next byte; a bucket of a few
// keys is finished by insertion. It needs no second buffer of keys (2.4
// MB for a queue of 75,000, held while its tasks change, as a
// least-significant-byte sort's is). Keys equal in every other field are
// left in idx's order, as a stable sort leaves them: sortTies orders such
// a run afterwards, and finds it as the last sort left it, most of a
// column sort's ties in a run of thousands (three times as fast as the
// same run shuffled, at 100,000 tasks sorted by priority).
func radixSort(keys []pullKey) {
	if len(keys) < 2 {
		return
	}
	// The bytes that differ anywhere: most of a queue shares its class,
	// the top bytes of its seconds and of its ids.
	var differ pullKey
	first := keys[0]
	for _, k := range keys[1:] {
		differ.key |= k.key ^ first.key
		differ.sub |= k.sub ^ first.sub
		differ.id0 |= k.id0 ^ first.id0
		differ.id1 |= k.id1 ^ first.id1
		differ.idx |= k.idx ^ first.idx
	}
	var varying []int
	for b := range keyBytes {
		if digit(differ, b) != 0 {
			varying = append(varying, b)
		}
	}
	flagSort(keys, varying)
}

// keyBytes is how many bytes a pullKey sorts on: key's 8, sub's 4, id0's
// and id1's 8 each, then idx's 4.
const keyBytes = 32

// digit is byte b of k in sort order, most significant first: bytes 0-7
// are key's, 8-11 sub's, 12-19 id0's, 20-27 id1's, 28-31 idx's.
func digit(k pullKey, b int) byte {
	switch {
	case b < 8:
		return byte(k.key >> (56 - 8*b))
	case b < 12:
		return byte(k.sub >> (24 - 8*(b-8)))
	case b < 20:
		return byte(k.id0 >> (56 - 8*(b-12)))
	case b < 28:
		return byte(k.id1 >> (56 - 8*(b-20)))
	}
	return byte(uint32(k.idx) >> (24 - 8*(b-28)))
}

// keyLess orders two keys as radixSort does.
func keyLess(a, b pullKey) bool {
	switch {
	case a.key != b.key:
		return a.key < b.key
	case a.sub != b.sub:
		return a.sub < b.sub
	case a.id0 != b.id0:
		return a.id0 < b.id0
	case a.id1 != b.id1:
		return a.id1 < b.id1
	}
	return a.idx < b.idx
}

// flagBucket is the most keys insertion sorts instead of another pass.
const flagBucket = 24

// flagSort sorts keys on the given bytes, most significant first.
func flagSort(keys []pullKey, varying []int) {
	for len(keys) > flagBucket && len(varying) > 0 {
		b := varying[0]
		var count [256]int
		for _, k := range keys {
			count[digit(k, b)]++
		}
		if count[digit(keys[0], b)] == len(keys) {
			varying = varying[1:] // every key here has this byte
			continue
		}
		var head, tail [256]int
		at := 0
		for d, c := range count {
			head[d], tail[d] = at, at+c
			at += c
		}
		for d := range 256 {
			for head[d] < tail[d] {
				k := keys[head[d]]
				for e := digit(k, b); e != byte(d); e = digit(k, b) {
					k, keys[head[e]] = keys[head[e]], k
					head[e]++
				}
				keys[head[d]] = k
				head[d]++
			}
		}
		start := 0
		for _, c := range count {
			if c > 1 {
				flagSort(keys[start:start+c], varying[1:])
			}
			start += c
		}
		return
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keyLess(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}
