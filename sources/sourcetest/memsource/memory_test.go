package memsource

import (
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// The fixture is only worth testing the hub against if it keeps the same
// protocol as the real backends.
func TestConformance(t *testing.T) {
	sourcetest.Run(t, sourcetest.Harness{
		NewClocked: func(_ testing.TB, now func() time.Time) sources.Source {
			m := NewMemory("mem")
			m.Now = now
			return m
		},
		Claimers: 16, Tasks: 200,
	})
}
