package notion

import (
	"testing"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// The kit runs against each preset over real HTTP. Notion cannot promise
// zero double claims; the kit measures them and the figures are logged
// (go test -v -run Conformance ./sources/notion/ | grep 'double').
func TestConformance(t *testing.T) {
	for _, preset := range []string{PresetNtask, PresetClaimProtocol, PresetMeshHandoff} {
		t.Run(preset, func(t *testing.T) {
			t.Parallel()
			sourcetest.Run(t, sourcetest.Harness{
				New: func(tb testing.TB) sources.Source {
					emu := newEmulator(tb)
					db := emu.database(tb, withExtras(presetSchema(preset), preset))
					return emu.open(tb, emu.config(db, preset))
				},
				Claimers: 64,
				Tasks:    40,
			})
		})
	}
}
