package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
)

func (a *app) doctorCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check every source: credentials, reachability, schema, write access",
		Long: `doctor checks, for each configured source (or --source), that its
credentials are present (never printing them), the backend answers, its
schema is what claimdeck needs, every live task reads cleanly (a broken
lock file is named with its path), and this process may write; for a
source read through a relay, that the relay answers, accepts the token
and reads the source well (its status and last read); with a
mesh, which nodes are DOWN and since when, as the node health record
(written by the dashboard, node watch and sweep --ping) or else the
registry last recorded them (no pings are sent). It
changes nothing. The report is JSON; the exit status is 3 when any
source's check fails (a DOWN node is reported, not a configuration fault).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list := a.Cfg.Sources
			if a.SourceName != "" {
				sc, err := cmdutil.PickSource(a.Cfg, a.SourceName)
				if err != nil {
					return err
				}
				list = []cmdutil.SourceConfig{sc}
			}
			ok := true
			reports := make([]cmdutil.SourceReport, 0, len(list))
			for _, sc := range list {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				r := a.Diagnose(ctx, sc)
				if sc.Relay != "" {
					cmdutil.DiagnoseRelay(ctx, sc, &r)
				}
				cancel()
				ok = ok && r.OK
				reports = append(reports, r)
			}
			// checks.db_accessible is the ntask contract's summary line.
			out := map[string]any{"ok": ok, "version": model.Build().String(), "build": model.Build(), "config": a.Cfg.File, "actor": a.Cfg.Actor, "sources": reports,
				"checks": map[string]any{"db_accessible": ok}}
			m, err := a.diagnoseMesh()
			if err != nil {
				return err
			}
			if m != nil {
				out["mesh"] = m
			}
			if a.Output == "table" {
				a.printDoctor(reports, m)
			} else if err := a.Out().JSON(out); err != nil {
				return err
			}
			if !ok {
				return cmdutil.ExitStatus(model.CodeMisconfigured.ExitStatus())
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 20*time.Second, "how long each source may take to answer")
	return cmd
}

// meshReport is the mesh as the node health record (or else the
// registry) last recorded it: no pings, the doctor changes nothing and
// waits on no node. Down names each DOWN node; DownNodes says since when
// and why.
type MeshReport struct {
	Registry  string     `json:"registry"`
	Record    string     `json:"health_record,omitempty"`
	OK        bool       `json:"ok"`
	Nodes     int        `json:"nodes"`
	Down      []string   `json:"down"`
	DownNodes []nodeJSON `json:"down_nodes"`
}

func (a *app) diagnoseMesh() (*MeshReport, error) {
	reg, err := a.Registry()
	if reg == nil || err != nil {
		return nil, err
	}
	r := &MeshReport{Registry: a.Cfg.Mesh.Registry, Nodes: len(reg.Nodes), Down: []string{}, DownNodes: []nodeJSON{}}
	if b := a.Book(); b != nil {
		r.Record = b.Path()
	}
	for _, n := range a.MeshNodes(reg)() {
		if n.Status == model.NodeDown {
			r.Down = append(r.Down, n.Name)
			r.DownNodes = append(r.DownNodes, nodeOut(n))
		}
	}
	r.OK = len(r.Down) == 0
	return r, nil
}

func (a *app) printDoctor(reports []cmdutil.SourceReport, m *MeshReport) {
	for _, r := range reports {
		fmt.Fprintf(a.Stdout, "%s (%s)\n", r.Name, r.Kind)
		for _, c := range r.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(a.Stdout, "  %s %-12s %s\n", mark, c.Check, c.Detail)
		}
	}
	if m == nil {
		return
	}
	fmt.Fprintf(a.Stdout, "mesh (%s, as last recorded)\n", m.Registry)
	if m.OK {
		fmt.Fprintf(a.Stdout, "  ok   nodes        %d, none DOWN\n", m.Nodes)
		return
	}
	fmt.Fprintf(a.Stdout, "  FAIL nodes        %d DOWN of %d\n", len(m.Down), m.Nodes)
	for _, n := range m.DownNodes {
		line := n.Node + " DOWN"
		if n.Since != "" {
			line += " since " + n.Since
		}
		if n.LastError != "" {
			line += fmt.Sprintf(" (%d failed pings: %s)", n.Failures, n.LastError)
		}
		if n.RecordedBy != "" {
			line += ", recorded by " + n.RecordedBy
		}
		fmt.Fprintf(a.Stdout, "       %s\n", line)
	}
}
