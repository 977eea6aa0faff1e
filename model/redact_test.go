package model_test

import (
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
