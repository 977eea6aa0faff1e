package model_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/claimdeck/claimdeck/model"
)

func TestRedactHidesEverySecretShape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"postgres://app:hunter2@db:5432/q?sslmode=disable", "postgres://app:[redacted]@db:5432/q?sslmode=disable"},
		{"postgres://app@db/q?sslmode=disable&password=hunter2", "postgres://app@db/q?sslmode=disable&password=[redacted]"},
		{"postgres://db/q?password=two words&sslmode=disable", "postgres://db/q?password=[redacted]&sslmode=disable"},
		{"host=db password = hunter2 dbname=q", "host=db password = [redacted] dbname=q"},
		{"host=db password='two words' dbname=q", "host=db password='[redacted]' dbname=q"},
		{`host=db password='it\'s here' user=a`, `host=db password='[redacted]' user=a`},
		{`host=db password=two\ words user=a`, `host=db password=[redacted] user=a`},
		{"host=db sslpassword=keypass sslkey=/k", "host=db sslpassword=[redacted] sslkey=/k"},
		{"https://bob:s3cret@example.com/api", "https://bob:[redacted]@example.com/api"},
		{"https://hooks.example/x?token=abc123&room=ops", "https://hooks.example/x?token=[redacted]&room=ops"},
		{"https://blob.example/f?sv=1&sig=Zm9v&se=2", "https://blob.example/f?sv=1&sig=[redacted]&se=2"},
		{"https://api.example/?api_key=k1&secret=s1", "https://api.example/?api_key=[redacted]&secret=[redacted]"},
		{`Post "https://n1/hooks?token=abc": dial tcp: refused`, `Post "https://n1/hooks?token=[redacted]": dial tcp: refused`},
		{"Authorization: Bearer ntn_abcdef", "Authorization: Bearer [redacted]"},
		{"sent bearer ntn_abcdef to n1", "sent bearer [redacted] to n1"},
		{`{"token": "ntn_abc", "name": "n1"}`, `{"token": "[redacted]", "name": "n1"}`},
		{"the lock token is no longer current", "the lock token is no longer current"},
		{"CONFLICT: claim T-1: held by agent-7", "CONFLICT: claim T-1: held by agent-7"},
		{"postgres://db/q", "postgres://db/q"},
	}
	for _, c := range cases {
		if got := model.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestErrorsAreRedacted(t *testing.T) {
	err := model.Errorf(model.CodeAPIError, "open", "", "cannot reach postgres://app:hunter2@db/q")
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("an error leaks the password: %s", err)
	}
}

// FuzzRedactAgainstPgx holds Redact to pgx's own DSN parser: whatever pgx
// reads as the password must not survive redaction.
func FuzzRedactAgainstPgx(f *testing.F) {
	for _, s := range []string{
		"postgres://app:hunter2@db:5432/q?sslmode=disable",
		"postgresql://app@db/q?password=hunter2",
		"postgres://db/q?password=two%20words&sslmode=disable",
		"postgres://u:p%40ss@db/q",
		"postgres://u:pass@h1:5432,h2:5433/q",
		"host=db password = hunter2 dbname=q",
		"host=db password='two words' dbname=q",
		`host=db password='it\'s here'`,
		`host=db password=two\ words`,
		"password=hunter2",
		"host=db\tpassword=\"quoted\"",
		"user=a password= 'x y z' sslpassword=kp",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		t.Setenv("PGPASSWORD", "")
		t.Setenv("PGPASSFILE", "/nonexistent")
		t.Setenv("PGSERVICEFILE", "/nonexistent")
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil || len(cfg.Password) < 4 {
			return
		}
		p := cfg.Password
		if innocent(cfg, p) {
			return
		}
		if out := model.Redact(dsn); strings.Contains(out, p) {
			t.Fatalf("pgx reads password %q from %q; Redact leaves it in %q", p, dsn, out)
		}
	})
}

// innocent reports whether p also appears where it is no secret — another
// field's value or a word redaction keeps — so seeing it is no leak.
func innocent(cfg *pgconn.Config, p string) bool {
	if strings.Trim(p, "0123456789,:/@?&= ") == "" {
		return true // could be the DSN's own ports and punctuation
	}
	others := []string{cfg.Host, cfg.User, cfg.Database, model.Redacted, "postgres://", "postgresql://"}
	for _, k := range strings.Fields("host hostaddr port user password sslpassword dbname sslmode sslkey sslcert sslrootcert connect_timeout target_session_attrs") {
		others = append(others, " "+k+"= ", "?"+k+"=&", "&"+k+"=&")
	}
	for _, fb := range cfg.Fallbacks {
		others = append(others, fb.Host)
	}
	for k, v := range cfg.RuntimeParams {
		others = append(others, k, v)
	}
	for _, o := range others {
		if strings.Contains(o, p) {
			return true
		}
	}
	return false
}

func TestRedactURLHidesWebhookSecretsByShape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://hooks.slack.com/services/T0A1B2C3D/B0E4F5G6H/QTokZZsecretPart", "https://hooks.slack.com/services/T0A1B2C3D/B0E4F5G6H/[redacted]"},
		{"https://discord.com/api/webhooks/123456/abc-def", "https://discord.com/api/webhooks/123456/[redacted]"},
		{"https://n1.example/hooks/agent?token=QTokZZ&room=ops#frag", "https://n1.example/hooks/agent?token=[redacted]&room=ops#[redacted]"},
		{"https://n1.example/h?c=Zx81Kq02Lm93Np47&room=ops", "https://n1.example/h?c=[redacted]&room=ops"},
		{"https://bob:pw@n1.example/hooks/health", "https://bob:[redacted]@n1.example/hooks/health"},
		{"http://127.0.0.1:8080/hooks/health", "http://127.0.0.1:8080/hooks/health"},
		{"https://api.notion.com/v1/pages/2f835e81-2bbb-81b6-9700-e18108a40b1f", "https://api.notion.com/v1/pages/2f835e81-2bbb-81b6-9700-e18108a40b1f"},
		{"https://x.example/k/Ab3dEf6hIj9kLm2nOp", "https://x.example/k/[redacted]"},
	}
	for _, c := range cases {
		if got := model.RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	in := `notify n2: POST "https://hooks.slack.com/services/T0A1B2C3D/B0E4F5G6H/QTokZZsecretPart": dial tcp 127.0.0.1:9: connection refused`
	if got := model.Redact(in); strings.Contains(got, "QTokZZ") || !strings.Contains(got, "127.0.0.1:9: connection refused") {
		t.Errorf("Redact of a webhook in running text: %q", got)
	}
	if got := model.Redact("notion answered 401 for ntn_4Ab9Zx7Qw2Er5Ty8Ui1Op3As"); strings.Contains(got, "4Ab9Zx7Qw2") {
		t.Errorf("a Notion token of known shape survives: %q", got)
	}
}

// FuzzRedactKeepsWordsAndRemovesSecrets: a configured secret (a DSN
// password, a webhook's path secret, a query token) never survives
// redaction of a message that carries it where it is parsed from, and the
// ordinary words around it (context, failed, 127.0.0.1) always do, however
// weak the secret: redaction reads structure, never searches for a value.
func FuzzRedactKeepsWordsAndRemovesSecrets(f *testing.F) {
	for _, s := range []string{"x", "e", "hunter2", "pa@ss@word@ZZ", "context", "127", "QTokZZsecretPart", "a b", "%40", "fail"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, secret string) {
		const words = "failed to connect: context canceled (127.0.0.1)"
		dsn := (&url.URL{Scheme: "postgres", User: url.UserPassword("app", secret), Host: "127.0.0.1:5432", Path: "/q"}).String()
		hook := "https://hooks.slack.com/services/T0001/B0001/" + url.PathEscape(secret)
		query := "https://n1.example/hooks/agent?token=" + url.QueryEscape(secret)
		for _, msg := range []string{
			dsn + ": " + words,
			words + " dialing " + dsn,
			`notify n1: POST "` + hook + `": ` + words,
			`Post "` + query + `": ` + words,
		} {
			got := model.Redact(msg)
			if !strings.Contains(got, words) {
				t.Fatalf("ordinary words did not survive: %q → %q", msg, got)
			}
			rest := strings.Replace(got, words, "", 1)
			for _, form := range []string{url.PathEscape(secret), url.QueryEscape(secret), url.UserPassword("", secret).String()[1:]} {
				if len(form) >= 3 && strings.Trim(form, "%:0123456789ABCDEF") != "" && strings.Contains(rest, form) && !strings.Contains(strings.Replace(msg, form, "", 1), form) && !innocentIn(msg, form) {
					t.Fatalf("secret %q survives in %q (from %q)", form, got, msg)
				}
			}
		}
	})
}

// innocentIn reports whether form also appears in msg outside the secret's
// own place (the scheme, the host, the fixed words), where seeing it is no
// leak.
func innocentIn(msg, form string) bool {
	for _, o := range []string{"postgres://app:", "@127.0.0.1:5432/q", "https://hooks.slack.com/services/T0001/B0001/", "https://n1.example/hooks/agent?token=", "notify n1: POST", "failed to connect: context canceled (127.0.0.1)", "dialing", model.Redacted} {
		if strings.Contains(o, form) {
			return true
		}
	}
	return false
}
