package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// check is one line of the doctor's report.
type check struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// sourceReport is the doctor's findings for one source.
type sourceReport struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	OK     bool    `json:"ok"`
	Checks []check `json:"checks"`
}

// problems is what failed, one check after another.
func (r *sourceReport) problems() string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Check+": "+c.Detail)
		}
	}
	return strings.Join(out, "; ")
}

func (r *sourceReport) add(name string, err error, okDetail string) bool {
	c := check{Check: name, OK: err == nil, Detail: okDetail}
	if err != nil {
		c.Detail = err.Error()
	}
	r.Checks = append(r.Checks, c)
	return err == nil
}

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
			list := a.cfg.Sources
			if a.sourceName != "" {
				sc, err := pickSource(a.cfg, a.sourceName)
				if err != nil {
					return err
				}
				list = []SourceConfig{sc}
			}
			ok := true
			reports := make([]sourceReport, 0, len(list))
			for _, sc := range list {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				r := a.diagnose(ctx, sc)
				if sc.Relay != "" {
					diagnoseRelay(ctx, sc, &r)
				}
				cancel()
				ok = ok && r.OK
				reports = append(reports, r)
			}
			// checks.db_accessible is the ntask contract's summary line.
			out := map[string]any{"ok": ok, "version": model.Build().String(), "build": model.Build(), "config": a.cfg.file, "actor": a.cfg.Actor, "sources": reports,
				"checks": map[string]any{"db_accessible": ok}}
			m, err := a.diagnoseMesh()
			if err != nil {
				return err
			}
			if m != nil {
				out["mesh"] = m
			}
			if a.output == "table" {
				a.printDoctor(reports, m)
			} else if err := a.out().json(out); err != nil {
				return err
			}
			if !ok {
				return exitStatus(model.CodeMisconfigured.ExitStatus())
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 20*time.Second, "how long each source may take to answer")
	return cmd
}

// diagnose runs the checks of one source in order; a failed step skips
// the steps that depend on it.
func (a *app) diagnose(ctx context.Context, sc SourceConfig) sourceReport {
	r := sourceReport{Name: sc.Name, Kind: sc.Kind, OK: true}
	fail := func() sourceReport { r.OK = false; return r }
	if !r.add("credentials", credentials(sc), credentialDetail(sc)) {
		return fail()
	}
	src, err := openSource(ctx, a.cfg, sc, a.create)
	if !r.add("reachable", err, "opened") {
		// A schema refusal at open (Notion's property check) is the
		// schema's fault, not the network's: say so on the right line.
		switch {
		case errors.Is(err, sources.ErrCredentials):
			r.Checks = r.Checks[:len(r.Checks)-1]
			r.Checks[0] = check{Check: "credentials", Detail: err.Error()}
		case model.CodeOf(err) == model.CodeMisconfigured:
			r.Checks[len(r.Checks)-1] = check{Check: "schema", Detail: err.Error()}
		}
		return fail()
	}
	defer src.Close()
	if _, err := src.Next(ctx, "claimdeck-doctor"); !r.add("query", err, "the queue answers") {
		return fail()
	}
	if !r.add("data", unreadable(ctx, src), "every live task reads cleanly") {
		r.OK = false // reported, and the later checks still run
	}
	if st, isSQL := src.(*sqlstore.Store); isSQL && !st.Migrated() {
		r.add("schema", fmt.Errorf("table lacks claimdeck's lease columns: run `claimdeck migrate --source %s` (read-only until then)", sc.Name), "")
		return fail()
	}
	schema := "every property claimdeck needs is there"
	if reads := src.Caps().Reads; reads != "" {
		schema += "; read as " + reads
	}
	if st, isSQL := src.(*sqlstore.Store); isSQL && st.Behind() != "" {
		schema += fmt.Sprintf("; %s: `claimdeck migrate --source %s` adds it", st.Behind(), sc.Name)
	}
	r.add("schema", nil, schema)
	if a.cfg.readOnly(sc.Name) {
		r.add("write", nil, "read-only by configuration: not checked")
		return r
	}
	if !src.Caps().WriteCheck {
		r.add("write", nil, "this backend cannot check without writing: not checked")
		return r
	}
	if !r.add("write", src.CheckWrite(ctx), "this process may write") {
		return fail()
	}
	return r
}

// unreadable names the live tasks a source read from bad data (a broken
// lock file, with its path; an unknown status), the ones shown and never
// acted on until someone repairs them.
func unreadable(ctx context.Context, src sources.Source) error {
	d, err := src.Poll(ctx, "", sources.PollOption{FinishedAfter: time.Now(), Uncounted: true})
	if err != nil {
		return err
	}
	var bad []string
	for _, t := range d.Tasks {
		if t.More().Problem != "" {
			bad = append(bad, t.DisplayKey()+": "+t.More().Problem)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	const shown = 5
	n, more := len(bad), ""
	if n > shown {
		more = fmt.Sprintf("; and %d more (claimdeck list -o table shows them)", n-shown)
		bad = bad[:shown]
	}
	return fmt.Errorf("%d read from bad data, shown and never acted on until repaired: %s%s", n, strings.Join(bad, "; "), more)
}

// meshReport is the mesh as the node health record (or else the
// registry) last recorded it: no pings, the doctor changes nothing and
// waits on no node. Down names each DOWN node; DownNodes says since when
// and why.
type meshReport struct {
	Registry  string     `json:"registry"`
	Record    string     `json:"health_record,omitempty"`
	OK        bool       `json:"ok"`
	Nodes     int        `json:"nodes"`
	Down      []string   `json:"down"`
	DownNodes []nodeJSON `json:"down_nodes"`
}

func (a *app) diagnoseMesh() (*meshReport, error) {
	reg, err := a.registry()
	if reg == nil || err != nil {
		return nil, err
	}
	r := &meshReport{Registry: a.cfg.Mesh.Registry, Nodes: len(reg.Nodes), Down: []string{}, DownNodes: []nodeJSON{}}
	if b := a.book(); b != nil {
		r.Record = b.Path()
	}
	for _, n := range a.meshNodes(reg)() {
		if n.Status == model.NodeDown {
			r.Down = append(r.Down, n.Name)
			r.DownNodes = append(r.DownNodes, nodeOut(n))
		}
	}
	r.OK = len(r.Down) == 0
	return r, nil
}

// credentials says whether a source's secret is where the configuration
// says, without reading it out.
func credentials(sc SourceConfig) error {
	switch {
	case sc.DSNEnv != "" && os.Getenv(sc.DSNEnv) == "":
		return fmt.Errorf("$%s is empty or unset", sc.DSNEnv)
	case sc.TokenEnv != "" && os.Getenv(sc.TokenEnv) == "":
		return fmt.Errorf("$%s is empty or unset", sc.TokenEnv)
	case sc.Kind == "notion" && sc.Token == "" && sc.TokenEnv == "":
		return fmt.Errorf("no token: set token_env (or token) for this source")
	case sc.Kind == "postgres" && sc.DSN == "" && sc.DSNEnv == "":
		return fmt.Errorf("no dsn: set dsn_env (or dsn) for this source")
	}
	return nil
}

func credentialDetail(sc SourceConfig) string {
	switch {
	case sc.TokenEnv != "":
		return "token in $" + sc.TokenEnv
	case sc.DSNEnv != "":
		return "dsn in $" + sc.DSNEnv
	case sc.Token != "":
		return "token in the configuration file"
	case sc.DSN != "":
		return "dsn in the configuration file"
	}
	return "none needed"
}

func (a *app) printDoctor(reports []sourceReport, m *meshReport) {
	for _, r := range reports {
		fmt.Fprintf(a.stdout, "%s (%s)\n", r.Name, r.Kind)
		for _, c := range r.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(a.stdout, "  %s %-12s %s\n", mark, c.Check, c.Detail)
		}
	}
	if m == nil {
		return
	}
	fmt.Fprintf(a.stdout, "mesh (%s, as last recorded)\n", m.Registry)
	if m.OK {
		fmt.Fprintf(a.stdout, "  ok   nodes        %d, none DOWN\n", m.Nodes)
		return
	}
	fmt.Fprintf(a.stdout, "  FAIL nodes        %d DOWN of %d\n", len(m.Down), m.Nodes)
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
		fmt.Fprintf(a.stdout, "       %s\n", line)
	}
}
