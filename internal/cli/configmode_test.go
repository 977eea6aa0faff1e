package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// An inline secret in a configuration others can read gets the mesh
// registry's warning, naming the field and never the secret; a FIFO as the
// configuration is refused at once.
func TestConfigurationFileModeAndKind(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yaml")
	body := "actor: alice\naudit_log: " + filepath.Join(dir, "audit.jsonl") + "\nsources:\n" +
		"  - name: team\n    kind: postgres\n    dsn: postgres://app:Hunter2Secret@127.0.0.1:1/db\n" +
		"  - name: notes\n    kind: notion\n    token: secret_NotionToken123\n    database_id: x\n" +
		"mcp:\n  clients:\n    - name: ci-bot\n      token: " + cmdtest.BotToken + "\n" +
		"mesh:\n  webhook: https://hooks.example.com/services/T0/B0/XoXoWebhookSecret\n"
	runWith := func() (string, string) {
		var out, errOut bytes.Buffer
		cmdtest.Program(context.Background(), []string{"--config", conf, "config", "path"}, strings.NewReader(""), &out, &errOut)
		return out.String(), errOut.String()
	}
	for _, c := range []struct {
		mode os.FileMode
		warn bool
	}{{0o644, true}, {0o640, true}, {0o600, false}} {
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(conf, c.mode); err != nil {
			t.Fatal(err)
		}
		out, errOut := runWith()
		warned := strings.Contains(errOut, "sources[0].dsn, sources[1].token, mcp.clients[0].token, mesh.webhook") && strings.Contains(errOut, "chmod 600")
		if warned != c.warn {
			t.Errorf("mode %#o: warned %v, want %v:\n%s", c.mode, warned, c.warn, errOut)
		}
		if all := out + errOut; strings.Contains(all, "Hunter2Secret") || strings.Contains(all, "NotionToken123") || strings.Contains(all, cmdtest.BotToken) || strings.Contains(all, "XoXoWebhookSecret") {
			t.Errorf("mode %#o: a secret was printed:\n%s", c.mode, all)
		}
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := cmdtest.Program(context.Background(), []string{"--config", fifo, "list"}, strings.NewReader(""), &out, &out); code != 3 || !strings.Contains(out.String(), "named pipe") {
		t.Fatalf("a FIFO configuration: exit %d, %s", code, out.String())
	}
}
