package cmdutil

import (
	"fmt"
	"io"
	"strings"
)

// stderrProgress returns a progress callback that draws "label  12/40
// [=====     ]" on stderr when stderr is a terminal, rewriting one line and
// ending it when done; nil (no progress) otherwise, so logs, pipes and
// agents see only the answer.
func (a *Env) StderrProgress(label string) func(done, total int) {
	if !IsTerminal(a.Stderr) {
		return nil
	}
	return progressLine(a.Stderr, label)
}

func progressLine(w io.Writer, label string) func(done, total int) {
	const width = 30
	return func(done, total int) {
		if total <= 0 {
			return
		}
		filled := done * width / total
		fmt.Fprintf(w, "\r%s  %d/%d [%s%s]", label, done, total, strings.Repeat("=", filled), strings.Repeat(" ", width-filled))
		if done >= total {
			fmt.Fprintln(w)
		}
	}
}
