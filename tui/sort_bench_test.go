package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkColumnSort100k is a cursor move (Update and frame) and a
// free-text filter keystroke on the 100k Queue, in pull order and with a
// column sort active, in the same run; "press" is the key that sorts by
// a column, or reverses it: one full sort of the Queue.
func BenchmarkColumnSort100k(b *testing.B) {
	runes := func(s string) tea.KeyPressMsg { return keyMsgs(b, s)[0] }
	for _, sorted := range []struct {
		name string
		keys []string
	}{{"pull-order", nil}, {"pri-desc", []string{"P", "P"}}} {
		setup := func(b *testing.B) *Model {
			m, _ := benchModel(b)
			for _, k := range sorted.keys {
				m.Update(runes(k))
			}
			if want := sorted.keys != nil; (m.pane().grid.sortCol >= 0) != want {
				b.Fatalf("column sort active: %v, want %v", !want, want)
			}
			return m
		}
		b.Run("cursor/"+sorted.name, func(b *testing.B) {
			m := setup(b)
			moves := []tea.KeyPressMsg{{Code: tea.KeyDown}, {Code: tea.KeyUp}}
			i := 0
			for b.Loop() {
				m.Update(moves[i/1000%2])
				i++
				_ = m.View()
			}
		})
		b.Run("keystroke/"+sorted.name, func(b *testing.B) {
			m := setup(b)
			m.Update(runes("/"))
			for _, r := range "servic" {
				m.Update(runes(string(r)))
			}
			keys := []tea.KeyPressMsg{runes("e"), keyMsgs(b, "backspace")[0]}
			i := 0
			for b.Loop() {
				m.Update(keys[i%2])
				i++
			}
		})
	}
	// A number column sorts by packed keys, a text column by comparison.
	for _, press := range []struct{ name, key string }{{"press/pri", "P"}, {"press/title", "T"}} {
		b.Run(press.name, func(b *testing.B) {
			m, _ := benchModel(b)
			for b.Loop() {
				m.Update(runes(press.key))
			}
		})
	}
}
