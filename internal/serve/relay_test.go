package serve_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// The relay refuses to start without a token, or with a guessable one:
// the message names the variable and how to make a token, and never
// prints the token it was given.
func TestRelayRefusesNoTokenOrAWeakOne(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	const weak = "password1234"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	cases := []struct {
		env, value string
		flags      []string
	}{
		{"CLAIMDECK_RELAY_TOKEN", "", nil},
		{"CLAIMDECK_RELAY_TOKEN", weak, nil},
		{"TEAM_RELAY_TOKEN", "", []string{"--token-env", "TEAM_RELAY_TOKEN"}},
		{"TEAM_RELAY_TOKEN", weak, []string{"--token-env", "TEAM_RELAY_TOKEN"}},
	}
	for _, tc := range cases {
		t.Setenv("CLAIMDECK_RELAY_TOKEN", "")
		t.Setenv(tc.env, tc.value)
		// The address is taken: a relay that wrongly accepted the token
		// fails to listen at once, rather than serving for ever.
		code, out := cmdtest.RunOut(c.Conf, append([]string{"relay", "--listen", taken}, tc.flags...)...)
		if code != 3 || !strings.Contains(out, "MISCONFIGURED") || !strings.Contains(out, "$"+tc.env) || !strings.Contains(out, "openssl rand -hex 32") {
			t.Errorf("relay with $%s=%q %v: exit %d, want 3 naming $%s and how to make a token:\n%s", tc.env, tc.value, tc.flags, code, tc.env, out)
		}
		if strings.Contains(out, weak) {
			t.Errorf("relay printed the token it refused:\n%s", out)
		}
	}
	t.Setenv("CLAIMDECK_RELAY_TOKEN", cmdtest.RelayTestToken(t))
	if code, out := cmdtest.RunOut(c.Conf, "relay"); code != 3 || !strings.Contains(out, "--listen") {
		t.Errorf("relay without --listen: exit %d, want 3 naming --listen:\n%s", code, out)
	}
	for _, knob := range [][]string{{"--max-full", "-1"}, {"--stall", "-5s"}} {
		if code, out := cmdtest.RunOut(c.Conf, append([]string{"relay", "--listen", taken}, knob...)...); code != 3 || !strings.Contains(out, knob[0]) {
			t.Errorf("relay %v: exit %d, want 3 naming %s:\n%s", knob, code, knob[0], out)
		}
	}
}

// A relay's settings are checked when the configuration loads: a bad
// address is refused naming the source and the field, a token variable's
// name that is not one is refused; a dashboard-side command whose relay
// token variable is empty is refused naming the variable, while an agent
// command, which never reads through the relay, still works.
func TestRelayConfigValidation(t *testing.T) {
	bad := []struct{ yaml, want string }{
		{"    relay: ftp://127.0.0.1:7480\n", "http://HOST:PORT"},
		{"    relay: 127.0.0.1:7480\n", "http://HOST:PORT"},
		{"    relay: http://127.0.0.1:7480/v1/poll\n", "http://HOST:PORT"},
		{"    relay: http://127.0.0.1:7480\n    relay_token_env: $CLAIMDECK_RELAY_TOKEN\n", "relay_token_env"},
	}
	for _, tc := range bad {
		c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+tc.yaml)
		r := c.Run(3, "list")
		if !strings.Contains(r.Error.Message, "sources[0] (local)") || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("%q: %q, want the source and %q named", tc.yaml, r.Error.Message, tc.want)
		}
	}
	for _, env := range []string{"", "TEAM_RELAY_TOKEN"} {
		yaml := cmdtest.SQLiteSource + "    relay: http://127.0.0.1:1\n"
		want := "$CLAIMDECK_RELAY_TOKEN"
		if env != "" {
			yaml += "    relay_token_env: " + env + "\n"
			want = "$" + env
		}
		t.Setenv("CLAIMDECK_RELAY_TOKEN", "")
		t.Setenv("TEAM_RELAY_TOKEN", "")
		c := cmdtest.NewCLI(t, yaml)
		r := c.Run(3, "stats")
		if r.Error.Code != "MISCONFIGURED" || !strings.Contains(r.Error.Message, want) || !strings.Contains(r.Error.Message, "source local") {
			t.Errorf("stats with %s empty: %+v, want MISCONFIGURED naming %s and the source", want, r.Error, want)
		}
		c.Run(0, "create", "--title", "an agent's task")
		if got := c.Run(0, "list").Tasks; len(got) != 1 {
			t.Errorf("list without the relay's token: %d tasks, want 1", len(got))
		}
	}
}

// A dashboard-side command reads the relay's token from relay_token_file
// while only its owner may read the file; a file others may read is
// refused naming it and chmod 600, and a file with relay_token_env too is
// refused when the configuration loads.
func TestRelayTokenFile(t *testing.T) {
	t.Setenv("CLAIMDECK_RELAY_TOKEN", "")
	file := filepath.Join(t.TempDir(), "relay-token")
	tok := cmdtest.RelayTestToken(t)
	if err := os.WriteFile(file, []byte(tok+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := cmdtest.SQLiteSource + "    relay: http://127.0.0.1:1\n    relay_token_file: " + file + "\n"
	c := cmdtest.NewCLI(t, yaml)
	r := c.Run(3, "stats")
	if !strings.Contains(r.Error.Message, file) || !strings.Contains(r.Error.Message, "chmod 600") || strings.Contains(r.Error.Message, tok) {
		t.Errorf("stats with relay_token_file mode 0644: %+v, want refused naming %s and chmod 600", r.Error, file)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := cmdtest.RunOut(c.Conf, "stats"); strings.Contains(out, "MISCONFIGURED") || strings.Contains(out, tok) {
		t.Errorf("stats with relay_token_file mode 0600: exit %d, want the token read (the relay is down, not misconfigured):\n%s", code, out)
	}
	both := cmdtest.NewCLI(t, yaml+"    relay_token_env: TEAM_RELAY_TOKEN\n")
	if r := both.Run(3, "list"); !strings.Contains(r.Error.Message, "one way") {
		t.Errorf("relay_token_file with relay_token_env: %+v, want refused", r.Error)
	}
}

// config show prints the relay's address and its token variable's name,
// never the token; an address carrying a password is refused without
// printing the password.
func TestRelayConfigShowHidesTheTokenAndUserinfo(t *testing.T) {
	tok := cmdtest.RelayTestToken(t)
	t.Setenv("CLAIMDECK_RELAY_TOKEN", tok)
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"    relay: http://127.0.0.1:7480\n")
	code, out := cmdtest.RunOut(c.Conf, "config", "show")
	if code != 0 || !strings.Contains(out, `"relay":"http://127.0.0.1:7480"`) || !strings.Contains(out, `"relay_token_env":"CLAIMDECK_RELAY_TOKEN"`) {
		t.Fatalf("config show: exit %d, want the relay's address and token variable:\n%s", code, out)
	}
	if strings.Contains(out, tok) {
		t.Fatalf("config show printed the relay's token:\n%s", out)
	}
	pasted := "e" + tok[1:] // a token pasted in the wrong place; it starts with a letter, as a name would
	c = cmdtest.NewCLI(t, cmdtest.SQLiteSource+"    relay: http://127.0.0.1:7480\n    relay_token_env: "+pasted+"\n")
	code, out = cmdtest.RunOut(c.Conf, "config", "show")
	if code != 3 || strings.Contains(out, pasted) || !strings.Contains(out, "relay_token_env") {
		t.Fatalf("a token in place of relay_token_env: exit %d, want 3 naming the field without printing the token:\n%s", code, out)
	}
	c = cmdtest.NewCLI(t, cmdtest.SQLiteSource+"    relay: http://ops:hunter2@127.0.0.1:7480\n")
	code, out = cmdtest.RunOut(c.Conf, "config", "show")
	if code != 3 || strings.Contains(out, "hunter2") || !strings.Contains(out, "sources[0] (local)") || !strings.Contains(out, "@127.0.0.1:7480") {
		t.Fatalf("a relay address with a password: exit %d, want 3 naming the source with the password hidden:\n%s", code, out)
	}
}
