package tui

import "time"

// status is the line under the table: what the last action did or why it
// was refused, until it has had its time.
type status struct {
	text  string
	isErr bool
	at    time.Time
}

// How long a status message stays: a refusal long enough to be read
// twice, a note long enough to be seen.
const (
	noteLife  = 5 * time.Second
	errorLife = 30 * time.Second
)

func (s *status) set(text string, isErr bool, now time.Time) {
	s.text, s.isErr, s.at = text, isErr, now
}

// expire clears a message that has had its time.
func (s *status) expire(now time.Time) {
	life := noteLife
	if s.isErr {
		life = errorLife
	}
	if s.text != "" && now.Sub(s.at) >= life {
		s.text = ""
	}
}
