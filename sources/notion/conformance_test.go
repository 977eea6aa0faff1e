package notion

import (
	"net/http"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
	"github.com/claimdeck/claimdeck/sources/sourcetest"
)

// The kit runs against each preset over real HTTP, and the ntask preset
// also on a database set up by today's notion-task skill. Notion cannot promise
// zero double claims; the kit measures them and the figures are logged
// (go test -v -run Conformance ./sources/notion/ | grep 'double'). ntask runs
// with its calls spread over 16 sources, as agents in separate processes,
// so that the kit measures Notion's own race; the seed 000 and 001 presets
// run on one source, whose agents share its in-process claim guard.
func TestConformance(t *testing.T) {
	t.Run("ntask/separate-processes", func(t *testing.T) {
		t.Parallel()
		sourcetest.Run(t, spreadHarness(withExtras(presetSchema(PresetNtask), PresetNtask)))
	})
	t.Run("ntask/rate-limit-and-faults", func(t *testing.T) {
		t.Parallel()
		sourcetest.Run(t, spreadHarness(withExtras(presetSchema(PresetNtask), PresetNtask), func(tb testing.TB, emu *emulator) {
			emu.srv.SetRateLimit(notionemu.RateLimit{PerSecond: 400, Burst: 40})
			// One request in 30 fails with 504, writes after landing;
			// writes to one page closer than 2 ms collide (409).
			emu.srv.SetConflictWindow(2 * time.Millisecond)
			if err := emu.srv.SetFaults(notionemu.Faults{Rate: 1.0 / 30, Status: http.StatusGatewayTimeout, Apply: true}); err != nil {
				tb.Fatal(err)
			}
		}))
	})
	t.Run("ntask/today", func(t *testing.T) {
		t.Parallel()
		sourcetest.Run(t, spreadHarness(withExtras(notionemu.PresetToday(), PresetNtask)))
	})
	for _, preset := range []string{PresetClaimProtocol, PresetMeshHandoff} {
		t.Run(preset, func(t *testing.T) {
			t.Parallel()
			sourcetest.Run(t, sourcetest.Harness{
				NewClocked: func(tb testing.TB, now func() time.Time) sources.Source {
					emu := newEmulator(tb)
					db := emu.database(tb, withExtras(presetSchema(preset), preset))
					cfg := emu.config(db, preset)
					cfg.Now = now
					return emu.open(tb, cfg)
				},
				Claimers: 64,
				Tasks:    32,
			})
		})
	}
}

// spreadHarness runs the kit on an ntask database with its calls spread
// over 16 sources, as agents in separate processes.
// Each of setup adjusts the emulator first.
func spreadHarness(schema notionemu.DatabaseSchema, setup ...func(testing.TB, *emulator)) sourcetest.Harness {
	return sourcetest.Harness{
		NewClocked: func(tb testing.TB, now func() time.Time) sources.Source {
			emu := newEmulator(tb)
			cfg := emu.config(emu.database(tb, schema), PresetNtask)
			cfg.Now = now
			for _, f := range setup {
				f(tb, emu)
			}
			s := &spread{}
			for range 16 {
				s.all = append(s.all, emu.open(tb, cfg))
			}
			return s
		},
		Claimers: 64,
		Tasks:    32,
	}
}
