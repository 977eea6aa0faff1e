package cli_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// A PostgreSQL source's DSN in dsn_file: read at each start, so the next
// call after the file changes uses the new one; refused while the group or
// others may read the file, naming it and chmod 600; doctor and config
// show say where the DSN is and never what it is.
func TestDSNFileIsReadAtEachStartAndOnlyWhenPrivate(t *testing.T) {
	team, _ := freshPGDatabase(t, "dsnfile")
	u, err := url.Parse(team)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("postgres", "pw-4f1c9e-never-shown") // the test cluster trusts 127.0.0.1: any password opens
	secret := u.String()
	dir := t.TempDir()
	file := filepath.Join(dir, "governance.dsn")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cmdtest.NewCLI(t, "  - name: team\n    kind: postgres\n    dsn_file: "+file+"\n")
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf}, args...), strings.NewReader(""), &out, &errOut)
		all := out.String() + errOut.String()
		if strings.Contains(all, "pw-4f1c9e") {
			t.Fatalf("claimdeck %v showed the DSN's password:\n%s", args, all)
		}
		return code, all
	}
	if code, out := run("--create", "migrate"); code != 0 {
		t.Fatalf("migrate with dsn_file: exit %d\n%s", code, out)
	}
	c.Run(0, "create", "--title", "through the file")
	if code, out := run("doctor"); code != 0 || !strings.Contains(out, "dsn in file "+file) {
		t.Fatalf("doctor: exit %d, want it to say the dsn is in file %s:\n%s", code, file, out)
	}
	if code, out := run("config", "show"); code != 0 || !strings.Contains(out, file) {
		t.Fatalf("config show: exit %d, want the file named:\n%s", code, out)
	}

	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	code, out := run("list")
	if code != 3 || !strings.Contains(out, file) || !strings.Contains(out, "chmod 600") {
		t.Fatalf("list with the DSN file mode 0640: exit %d, want 3 naming %s and chmod 600:\n%s", code, file, out)
	}
	if code, out := run("doctor"); code == 0 || !strings.Contains(out, "chmod 600") {
		t.Fatalf("doctor with the DSN file mode 0640: exit %d, want it refused:\n%s", code, out)
	}

	// A new DSN in the file is read by the next call: no restart, no new environment.
	if err := os.WriteFile(file, []byte("postgres://postgres:pw-4f1c9e-never-shown@127.0.0.1:1/nowhere?connect_timeout=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := run("list"); code == 0 {
		t.Fatal("list still read the old DSN after the file changed")
	}
}

// A DSN given as a file and another way is refused when the configuration loads.
func TestDSNFileWithDSNEnvIsMisconfigured(t *testing.T) {
	c := cmdtest.NewCLI(t, "  - name: team\n    kind: postgres\n    dsn_env: TEAM_DSN\n    dsn_file: /run/secrets/team-dsn\n")
	if r := c.Run(3, "list"); !strings.Contains(r.Error.Message, "dsn_file with dsn or dsn_env") {
		t.Fatalf("dsn_file and dsn_env: %+v", r.Error)
	}
}
