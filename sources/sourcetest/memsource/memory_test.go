package memsource

import (
	"testing"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// The fixture is only worth testing the hub against if it keeps the same
// protocol as the real backends.
func TestConformance(t *testing.T) {
	sourcetest.Run(t, sourcetest.Harness{New: func(testing.TB) sources.Source { return NewMemory("mem") }, Claimers: 16, Tasks: 200})
}
