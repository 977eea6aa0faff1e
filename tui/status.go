package tui

import (
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// status is the line under the table: what the last action did or why it
// was refused, until it has had its time.
type status struct {
	text  string
	isErr bool
	at    time.Time
	now   func() time.Time // the dashboard's clock
}

// How long a status message stays: a refusal long enough to be read
// twice, a note long enough to be seen.
const (
	noteLife  = 5 * time.Second
	errorLife = 30 * time.Second
)

func (s *status) set(text string, isErr bool) {
	s.text, s.isErr, s.at = text, isErr, s.now()
}

// note says what happened.
func (s *status) note(text string) { s.set(text, false) }

// fail shows an error; what it quotes from outside is redacted here.
func (s *status) fail(text string) { s.set(model.Redact(text), true) }

// expire clears a message that has had its time.
func (s *status) expire() {
	now := s.now()
	life := noteLife
	if s.isErr {
		life = errorLife
	}
	if s.text != "" && now.Sub(s.at) >= life {
		s.text = ""
	}
}
