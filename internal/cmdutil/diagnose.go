package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/sqlstore"
)

// check is one line of the doctor's report.
type Check struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// sourceReport is the doctor's findings for one source.
type SourceReport struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// problems is what failed, one check after another.
func (r *SourceReport) Problems() string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Check+": "+c.Detail)
		}
	}
	return strings.Join(out, "; ")
}

func (r *SourceReport) add(name string, err error, okDetail string) bool {
	c := Check{Check: name, OK: err == nil, Detail: okDetail}
	if err != nil {
		c.Detail = err.Error()
	}
	r.Checks = append(r.Checks, c)
	return err == nil
}

// diagnose runs the checks of one source in order; a failed step skips
// the steps that depend on it.
func (a *Env) Diagnose(ctx context.Context, sc SourceConfig) SourceReport {
	r := SourceReport{Name: sc.Name, Kind: sc.Kind, OK: true}
	fail := func() SourceReport { r.OK = false; return r }
	if !r.add("credentials", credentials(sc), credentialDetail(sc)) {
		return fail()
	}
	src, err := OpenSource(ctx, a.Cfg, sc, a.Create)
	if !r.add("reachable", err, "opened") {
		// A schema refusal at open (Notion's property check) is the
		// schema's fault, not the network's: say so on the right line.
		switch {
		case errors.Is(err, sources.ErrCredentials):
			r.Checks = r.Checks[:len(r.Checks)-1]
			r.Checks[0] = Check{Check: "credentials", Detail: err.Error()}
		case model.CodeOf(err) == model.CodeMisconfigured:
			r.Checks[len(r.Checks)-1] = Check{Check: "schema", Detail: err.Error()}
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
	if st, isSQL := sources.Origin(src).(*sqlstore.Store); isSQL && !st.Migrated() {
		r.add("schema", fmt.Errorf("table lacks claimdeck's lease columns: run `claimdeck migrate --source %s` (read-only until then)", sc.Name), "")
		return fail()
	}
	schema := "every property claimdeck needs is there"
	if reads := src.Caps().Reads; reads != "" {
		schema += "; read as " + reads
	}
	if st, isSQL := sources.Origin(src).(*sqlstore.Store); isSQL && st.Behind() != "" {
		schema += fmt.Sprintf("; %s: `claimdeck migrate --source %s` adds it", st.Behind(), sc.Name)
	}
	r.add("schema", nil, schema)
	if ns, ok := src.(*notion.Source); ok {
		// Which Notion-Version the source speaks, and whether the
		// workspace answers the newer one: err only when it refuses its own.
		detail, err := ns.DoctorVersion(ctx)
		r.add("notion api", err, detail)
	}
	if a.Cfg.ReadOnlyFor(sc.Name) {
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

// credentials says whether a source's secret is where the configuration
// says, without reading it out.
func credentials(sc SourceConfig) error {
	for what, file := range map[string]string{"dsn": sc.DSNFile, "token": sc.TokenFile} {
		if file != "" {
			if _, err := sources.ReadSecret(what+"_file", Expand(file)); err != nil {
				return err
			}
		}
	}
	switch {
	case sc.DSNEnv != "" && os.Getenv(sc.DSNEnv) == "":
		return fmt.Errorf("$%s is empty or unset", sc.DSNEnv)
	case sc.TokenEnv != "" && os.Getenv(sc.TokenEnv) == "":
		return fmt.Errorf("$%s is empty or unset", sc.TokenEnv)
	case sc.Kind == "notion" && sc.Token == "" && sc.TokenEnv == "" && sc.TokenFile == "":
		return fmt.Errorf("no token: set token_file or token_env (or token) for this source")
	case sc.Kind == "postgres" && sc.DSN == "" && sc.DSNEnv == "" && sc.DSNFile == "":
		return fmt.Errorf("no dsn: set dsn_file or dsn_env (or dsn) for this source")
	}
	return nil
}

func credentialDetail(sc SourceConfig) string {
	switch {
	case sc.TokenFile != "":
		return "token in file " + Expand(sc.TokenFile)
	case sc.DSNFile != "":
		return "dsn in file " + Expand(sc.DSNFile)
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
