package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestUnknownConfigKeysAreRefusedWithLineAndNearestKey(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"    tabel: governance_tasks\n")
	body, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	bad := "actr: bob\nescalaton:\n  stale_after: 5m\n" + string(body) + "mesh:\n  pingevery: 1m\n"
	if err := os.WriteFile(c.Conf, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.Run(3, "list")
	for _, want := range []string{
		c.Conf + `:1: unknown key "actr" (did you mean "actor"?)`,
		c.Conf + `:2: unknown key "escalaton" (did you mean "escalation"?)`,
		`:10: unknown key "tabel" in sources[0] (did you mean "table"?)`,
		`unknown key "pingevery" in mesh (did you mean "ping_every"?)`,
	} {
		if !strings.Contains(r.Error.Message, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, r.Error.Message)
		}
	}
	c.Run(3, "doctor") // doctor does not call such a file healthy
}

func TestABadEnvironmentValueNamesTheVariable(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for name, val := range map[string]string{"CLAIMDECK_READ_ONLY": "yes", "CLAIMDECK_LEASE": "600", "CLAIMDECK_MESH_DOWN_AFTER": "three"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, val)
			r := c.Run(3, "list")
			if !strings.Contains(r.Error.Message, "$"+name) || strings.Contains(r.Error.Message, c.Conf) {
				t.Fatalf("%s=%s: %+v", name, val, r.Error)
			}
		})
	}
	t.Setenv("CLAIMDECK_CONFIG", filepath.Join(t.TempDir(), "absent.yaml"))
	t.Setenv("CLAIMDECK_READ_ONLY", "yes")
	_, errOut, code := cmdtest.Raw(c, "", "--output", "table", "list")
	if code != 3 || !strings.Contains(errOut, "$CLAIMDECK_READ_ONLY") || strings.Contains(errOut, "absent.yaml") {
		t.Fatalf("a bad variable blamed on a file: %d %s", code, errOut)
	}
}

func TestReadCommandsNeverCreateAQueue(t *testing.T) {
	for _, src := range []struct{ yaml, path string }{
		{"  - name: q\n    kind: sqlite\n    path: DIR/typo/queue.db\n", "typo/queue.db"},
		{"  - name: q\n    kind: lockdir\n    path: DIR/typo/.locks\n", "typo/.locks"},
	} {
		c := cmdtest.NewCLI(t, "")
		conf := strings.ReplaceAll(src.yaml, "DIR", c.Dir)
		if err := os.WriteFile(c.Conf, []byte("actor: alice\nsources:\n"+conf), 0o600); err != nil {
			t.Fatal(err)
		}
		missing := filepath.Join(c.Dir, src.path)
		for _, args := range [][]string{{"list"}, {"get", "--task", "x"}, {"next"}, {"claim", "--task", "x", "--agent-name", "a"}} {
			r := c.Run(3, args...)
			if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, missing) {
				t.Errorf("%v over a missing %s: %+v", args, src.path, r.Error)
			}
			if _, err := os.Stat(filepath.Join(c.Dir, "typo")); !os.IsNotExist(err) {
				t.Fatalf("%v created %s", args, src.path)
			}
		}
		c.Run(0, "--create", "list")
		if _, err := os.Stat(missing); err != nil {
			t.Fatalf("--create did not make %s: %v", src.path, err)
		}
	}
	c := cmdtest.NewCLI(t, "")
	if err := os.WriteFile(c.Conf, []byte("sources:\n  - {name: q, kind: sqlite, path: "+filepath.Join(c.Dir, "m", "q.db")+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Run(0, "migrate")
	c.Run(0, "list")
}

func TestConfigShowPrintsDurationsAsGoWritesThem(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	out, _, code := cmdtest.Raw(c, "", "config", "show")
	for _, want := range []string{`"lease":"20m0s"`, `"stale_after":"10m0s"`, `"escalate_after":"2h0m0s"`, `"ping_every":"2m0s"`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("config show lacks %s:\n%s", want, out)
		}
	}
}

func FuzzUnknownKeys(f *testing.F) {
	for _, s := range []string{
		"actr: x\n", "sources:\n  - {name: a, kind: sqlite, tabel: t}\n", "mesh: {pingevery: 1m}\n",
		"escalation: [1, 2]\n", "sources: 3\n", "- a\n- b\n", "{", "keys: {quit: [q]}\n", "? [a]\n: b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, msg := range cmdutil.UnknownKeys("c.yaml", data) {
			if !strings.HasPrefix(msg, "c.yaml:") || !strings.Contains(msg, "unknown key") {
				t.Fatalf("a refusal that does not name the file and line: %q", msg)
			}
		}
	})
}
