package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/stats"
)

func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "The fleet's numbers as JSON: throughput, queue and work times, lease ages, overrides",
		Long: `stats polls every configured source once and prints, per source, per
agent, per node and over all: claims, completions, failures and blocks per
minute over the last hour, time from queued to claimed and from claimed to
done (p50/p95), current lease ages and heartbeat gaps, and the human
overrides of the last hour (applied, and refused by result) as each
source's shared trail records them: the SQL audit table, the lock
directory's histories and trail files, Notion's signed notes on the pages
edited in the hour. So every HOME counts the team's overrides, not its own
journal's. A source whose trail cannot be read is shown as "overrides_unread", not
as zero (a relayed source's trail is read from the source itself). A single look sees the last hour as the tasks
show it (running claims, finishes by their last edit); the dashboard's Stats
view and "claimdeck metrics" count every transition as it happens. A source
that could not be read (down, or a relay that refuses or has stalled) is
shown with its error, "ok" is false and the exit status is 30 (API_ERROR):
those are not the fleet's numbers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			srcs, err := a.OpenForHub(ctx)
			if err != nil {
				return err
			}
			defer cmdutil.CloseAll(srcs)
			// The overrides of the last hour, from every source's shared
			// trail: the team's, whichever HOME asks.
			f := cmdutil.TeamNumbers(srcs, time.Now().Add(-stats.Window), 0)
			hc := a.ReadHub(a.Cfg.Policy(), cmdutil.DashboardEvery, srcs...)
			hc.Holders, hc.Observe = a.Cfg.Mesh.Holders, f.Tracker.Observe
			snap := hub.New(hc).Once(ctx)
			if _, err := f.Overrides(); err != nil {
				return model.Wrap(model.CodeMisconfigured, "stats", "", err)
			}
			rep := f.Tracker.Report(snap.At)
			// A source not read (down, a relay refusing or stalled) makes
			// these not the fleet's numbers: the report is printed, and the
			// command fails with the sources named.
			unread := rep.Unread()
			if a.Output == "table" {
				if err := statsTable(a, rep); err != nil {
					return err
				}
				return unread
			}
			out := map[string]any{"ok": unread == nil, "stats": rep}
			if unread != nil {
				out["error"] = cmdutil.FailPayload(unread)["error"]
			}
			if err := a.Out().JSON(out); err != nil || unread == nil {
				return err
			}
			return cmdutil.ExitStatus(model.CodeOf(unread).ExitStatus())
		},
	}
}

func statsTable(a *app, rep stats.Report) error {
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\tCLAIMS\tDONE\tFAILED\tBLOCKED\tWAIT p50/p95\tWORK p50/p95\tLEASES\n")
	row := func(name string, g stats.Group) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\n", name, g.Claims.Total, g.Completions.Total, g.Failures.Total,
			g.Blocks.Total, pair(g.QueueWait), pair(g.WorkTime), g.LeaseAge.N)
	}
	row("all", rep.Overall)
	for _, g := range rep.Sources {
		row("source "+g.Name, g)
	}
	for _, g := range rep.Agents {
		row("agent "+g.Name, g)
	}
	for _, g := range rep.Nodes {
		row("node "+g.Name, g)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The overrides of the hour, per source, from its shared trail, or
	// why they could not be counted.
	for _, g := range rep.Sources {
		switch {
		case g.OverridesUnread != "":
			fmt.Fprintf(a.Stdout, "overrides on %s: %s\n", g.Name, g.OverridesUnread)
		default:
			fmt.Fprintf(a.Stdout, "overrides on %s: %s applied; %s refused\n", g.Name, counts(g.Overrides), counts(g.Refused))
		}
	}
	return nil
}

// counts is "none", or "action n" for each action, by name.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func pair(q stats.Quantiles) string {
	if q.N == 0 {
		return "-"
	}
	d := func(s float64) string { return (time.Duration(s) * time.Second).String() }
	return d(q.P50) + "/" + d(q.P95)
}
