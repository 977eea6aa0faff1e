package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/notion/notionemu"
)

func (a *app) notionEmulatorCommand() *cobra.Command {
	var listen string
	var rate float64
	var faults notionemu.Faults
	cmd := &cobra.Command{
		Use:   "notion-emulator",
		Short: "Serve a local Notion API emulator with a database per seed",
		Long: `notion-emulator serves the strict Notion API emulator claimdeck's tests use,
with one database per schema preset (ntask, claim-protocol, mesh-handoff),
one set up as today's notion-task skill does (ntask-today, read by schema
ntask) and a seed 001 Handoff Queue. The token to use and the database ids are
printed on stderr; point a notion source's base_url at the address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := cmdutil.NewEmulatorWorkspace(notionemu.RateLimit{PerSecond: rate, Burst: 10})
			if err != nil {
				return model.Wrap(model.CodeAPIError, "notion-emulator", "", err)
			}
			if err := w.Srv.SetFaults(faults); err != nil {
				return model.Wrap(model.CodeMisconfigured, "notion-emulator", "", err)
			}
			addr, done, err := w.Serve(cmd.Context(), listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "notion emulator on http://%s\ntoken: %s\n", addr, w.Token)
			for _, name := range []string{notion.PresetNtask, cmdutil.TodayDB, notion.PresetClaimProtocol, notion.PresetMeshHandoff, "handoff-queue"} {
				fmt.Fprintf(a.Stderr, "database %-15s %s\n", name, w.Dbs[name])
			}
			fmt.Fprintf(a.Stderr, "config:\n  - name: emu\n    kind: notion\n    base_url: http://%s\n    token_env: NOTION_TOKEN\n    database_id: %s\n    schema: ntask\n", addr, w.Dbs[notion.PresetNtask])
			if err := <-done; err != nil && cmd.Context().Err() == nil {
				return model.Wrap(model.CodeAPIError, "notion-emulator", "", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7700", "address to serve on")
	cmd.Flags().Float64Var(&rate, "rate", notionemu.DefaultRateLimit.PerSecond, "requests per second per token before 429 (0: no limit)")
	cmd.Flags().Float64Var(&faults.Rate, "fault-rate", 0, "share of requests (0 to 1) answered with --fault-status instead, for fault drills")
	cmd.Flags().IntVar(&faults.Status, "fault-status", 503, "the status of injected faults (500, 502, 503, 504, 529)")
	cmd.Flags().DurationVar(&faults.Latency, "fault-latency", 0, "latency added to every request")
	cmd.Flags().BoolVar(&faults.Apply, "fault-apply", false, "let a faulted write take effect before its error, as a gateway timeout after Notion committed")
	return cmd
}
