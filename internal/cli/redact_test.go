package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestConfigShowHidesEverySecret(t *testing.T) {
	c := cmdtest.NewCLI(t, `  - name: q1
    kind: postgres
    dsn: postgres://agent@db/q?sslmode=disable&password=pw-query
  - name: q2
    kind: postgres
    dsn: host=db password = pw-spaced dbname=q
  - name: q3
    kind: postgres
    dsn: "host=db password='pw two words' dbname=q"
  - name: n1
    kind: notion
    token: ntn-literal
    base_url: https://bob:pw-userinfo@notion.example
    database_id: d1
mesh:
  webhook: https://chat.example/hook?room=ops&token=pw-webhook
`)
	var out bytes.Buffer
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "config", "show"}, nil, &out, &out)
	for _, secret := range []string{"pw-query", "pw-spaced", "pw", "two words", "ntn-literal", "pw-userinfo", "pw-webhook"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("config show prints %q:\n%s", secret, out.String())
		}
	}
	for _, kept := range []string{"host=db", "dbname=q", "sslmode=disable", "room=ops", "notion.example"} {
		if !strings.Contains(out.String(), kept) {
			t.Errorf("config show lost %q:\n%s", kept, out.String())
		}
	}
}

// A Slack-style webhook keeps its secret in the path: config show names
// the webhook and hides that part.
func TestConfigShowHidesAWebhookPathSecret(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+`mesh:
  webhook: https://hooks.slack.com/services/T0A1B2C3D/B0E4F5G6H/QTokZZsecretPart
`)
	var out bytes.Buffer
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "config", "show"}, nil, &out, &out)
	if strings.Contains(out.String(), "QTokZZ") || !strings.Contains(out.String(), "hooks.slack.com/services/T0A1B2C3D/B0E4F5G6H/") {
		t.Fatalf("config show:\n%s", out.String())
	}
}
