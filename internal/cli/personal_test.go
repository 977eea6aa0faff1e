package cli_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// A person's default output: output: table in the configuration gives
// tables where a table is offered, JSON where only JSON is (version), and
// -o json still wins; an unknown value is refused naming the key.
func TestOutputTableInTheConfigurationIsAPersonsDefault(t *testing.T) {
	// Not parallel: newCLI sets the test's state directory in the environment.
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	c.Run(0, "create", "--title", "a person's table")
	body, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Conf, append([]byte("output: table\n"), body...), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := cmdtest.RunOut(c.Conf, "list"); code != 0 || !strings.HasPrefix(out, "SOURCE") || !strings.Contains(out, "a person's table") {
		t.Errorf("list with output: table: exit %d\n%s", code, out)
	}
	if code, out := cmdtest.RunOut(c.Conf, "version"); code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("version (JSON only) with output: table: exit %d\n%s", code, out)
	}
	if r := c.Run(0, "-o", "json", "list"); len(r.Tasks) != 1 {
		t.Errorf("-o json with output: table: %+v", r)
	}
	if err := os.WriteFile(c.Conf, append([]byte("output: yaml\n"), body...), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := c.Run(3, "list"); !strings.Contains(r.Error.Message, "output") {
		t.Errorf("output: yaml: %+v", r.Error)
	}
}

func TestRelativeTimes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(20 * time.Second), "now"},
		{now.Add(12 * time.Minute), "in 12m"},
		{now.Add(-3*time.Hour - 5*time.Minute), "3h05m ago"},
		{now.Add(72 * time.Hour), "in 3d"},
	} {
		if got := cmdutil.RelTime(tc.at, now); got != tc.want {
			t.Errorf("relTime(%v) = %q, want %q", tc.at.Sub(now), got, tc.want)
		}
	}
}

// Rows are cut to the terminal's width, each line on its own.
func TestTableRowsAreCutToTheWidth(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := (cmdutil.Printer{W: &b, Width: 12}).Fitted()
	if _, err := w.Write([]byte("short\na line longer than twelve\n")); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "short\na line long…\n" {
		t.Errorf("cut lines: %q", got)
	}
}

// --debug logs to stderr through the redaction; stdout keeps the answer.
func TestDebugLogsToStderrWithSecretsRedacted(t *testing.T) {
	// Not parallel: newCLI below sets the test's state directory in the
	// environment.
	var out strings.Builder
	log := cmdutil.NewLog(&out, -4)
	log.Debug("opening postgres://agent:hunter2@db/q", "dsn", "host=db password=hunter2", "token", "ntn_abc", "took", time.Second)
	got := out.String()
	if strings.Contains(got, "hunter2") || strings.Contains(got, "ntn_abc") || !strings.Contains(got, "took=1s") || !strings.Contains(got, "level=DEBUG") {
		t.Errorf("log line: %s", got)
	}
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	code, both := cmdtest.RunOut(c.Conf, "--debug", "list")
	if code != 0 || !strings.Contains(both, "level=DEBUG") || !strings.Contains(both, "source open") {
		t.Errorf("--debug list: exit %d\n%s", code, both)
	}
}
