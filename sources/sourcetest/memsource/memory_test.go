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
		New: func(testing.TB) sources.Source { return NewMemory("mem") },
		Advance: func(_ testing.TB, src sources.Source, _ string, d time.Duration) {
			src.(*Memory).Advance(d)
		},
		Claimers: 16, Tasks: 200,
	})
}
