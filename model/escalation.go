package model

import "time"

// Level is a rung of seed 001's escalation ladder.
type Level uint8

// Escalation levels, in order.
const (
	LevelNone      Level = iota
	LevelStale           // 10 min: mark stale, available for takeover
	LevelUrgent          // 30 min: escalate to urgent priority
	LevelNotify          // 1 h: notify the mesh
	LevelEscalated       // 2 h: mark escalated, ping humans
)

var levelNames = [...]string{"", "stale", "urgent", "notify", "escalated"}

func (l Level) String() string {
	if int(l) >= len(levelNames) {
		return "level?"
	}
	return levelNames[l]
}

// ParseLevel reads a level name as String prints it; "" is LevelNone.
func ParseLevel(s string) (Level, bool) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), true
		}
	}
	return LevelNone, false
}

// Stuck is how long a claim has gone without a sign of life, or zero when
// the claim is not stuck: nobody holds it, a human holds it, or its lease is
// still running. A running lease always wins over the ladder, so a seed 002
// agent heartbeating every 10 minutes on a 20 minute lease is never stale.
func Stuck(t *Task, now time.Time) time.Duration {
	if t.State != StateClaimed || t.claimRef().Holder != HolderAgent {
		return 0
	}
	if !t.claimRef().Expires.IsZero() && now.Before(t.claimRef().Expires.Time()) {
		return 0
	}
	alive := t.claimRef().LastAlive()
	if alive.IsZero() || now.Before(alive) {
		return 0
	}
	return now.Sub(alive)
}

// Escalation places a claim on the ladder by the time it has been stuck. An
// expired lease is at least stale, however recently the holder was seen: the
// Stale rung itself is where a lease runs out, which backends that store only
// claimed-at place at claimed-at + Ladder.Stale (seed 001's STALE_THRESHOLD).
func Escalation(t *Task, now time.Time, l Ladder) Level {
	if t.State != StateClaimed || t.claimRef().Holder != HolderAgent {
		return LevelNone
	}
	if !t.claimRef().Expires.IsZero() && now.Before(t.claimRef().Expires.Time()) {
		return LevelNone
	}
	stuck := Stuck(t, now)
	switch {
	case stuck >= l.Escalate:
		return LevelEscalated
	case stuck >= l.Notify:
		return LevelNotify
	case stuck >= l.Urgent:
		return LevelUrgent
	}
	return LevelStale
}
