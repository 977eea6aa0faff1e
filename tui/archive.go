package tui

import (
	"strings"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// archiveMsg is the answer to a filter that asked for history.
type archiveMsg struct{ err error }

var finalStates = []model.State{model.StateDone, model.StateFailed, model.StateCanceled}

// archiveQuery is what a filter asks of the history the hub keeps in the
// backends: a state: term naming a final state ("state:done", "state:fail")
// and the first free-text word; a negated word asks nothing. nil when it
// asks only for live work.
func archiveQuery(f model.Filter) *sources.ArchiveQuery {
	var q *sources.ArchiveQuery
	text := ""
	for _, tm := range f.Terms {
		if tm.Not {
			continue
		}
		switch tm.Field {
		case "":
			if text == "" {
				text = tm.Value
			}
		case "state":
			// The final states' names start with different letters.
			for _, s := range finalStates {
				if tm.Value != "" && strings.HasPrefix(s.String(), tm.Value) {
					q = &sources.ArchiveQuery{State: s}
				}
			}
		}
	}
	if q != nil {
		q.Text = text
	}
	return q
}

// archiveDone says on st how reading the history ended.
func (in *input) archiveDone(msg archiveMsg, st *status) {
	switch {
	case msg.err != nil:
		st.fail("reading history: " + msg.err.Error())
	case in.archiveAsked:
		st.note("")
	}
}
