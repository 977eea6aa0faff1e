package cmdtest

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ScrapeUntil scrapes url until its body holds every one of want, at most
// tries times, a pause apart, and returns the body; it fails the test
// with the last body when the scrapes run out.
func ScrapeUntil(t testing.TB, url string, tries int, pause time.Duration, want ...string) string {
	t.Helper()
	var body string
	for n := 0; ; n++ {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(body, w)
		}
		if !missing {
			return body
		}
		if n == tries {
			t.Fatalf("%d scrapes of %s never showed all of %q:\n%s", tries, url, want, body)
		}
		time.Sleep(pause)
	}
}

// CheckMetrics runs `promtool check metrics` on a scrape's body when
// promtool is installed.
func CheckMetrics(t testing.TB, body string) {
	t.Helper()
	tool, err := exec.LookPath("promtool")
	if err != nil {
		return
	}
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
