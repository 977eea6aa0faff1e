package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

func TestListLimit(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for range cmdutil.DefaultTableLimit + 3 {
		c.Run(0, "create", "--title", "job")
	}
	table := func(args ...string) (rows int, footer string) {
		var out, errOut bytes.Buffer
		if code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf, "list", "-o", "table"}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("list -o table %v: exit %d %s", args, code, errOut.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
			if strings.HasPrefix(l, "…") {
				footer = l
				continue
			}
			rows++
		}
		return rows, footer
	}
	if rows, footer := table(); rows != cmdutil.DefaultTableLimit || !strings.Contains(footer, "3 more") {
		t.Errorf("list -o table: %d rows, footer %q; want %d and 3 more", rows, footer, cmdutil.DefaultTableLimit)
	}
	if rows, footer := table("--limit", "7"); rows != 7 || !strings.Contains(footer, "96 more") {
		t.Errorf("list -o table --limit 7: %d rows, footer %q", rows, footer)
	}
	if rows, footer := table("--limit", "0"); rows != cmdutil.DefaultTableLimit+3 || footer != "" {
		t.Errorf("list -o table --limit 0: %d rows, footer %q", rows, footer)
	}
	if got := c.Run(0, "list").Tasks; len(got) != cmdutil.DefaultTableLimit+3 {
		t.Errorf("list as JSON: %d tasks, want all %d", len(got), cmdutil.DefaultTableLimit+3)
	}
	var out, errOut bytes.Buffer
	cmdtest.Program(context.Background(), []string{"--config", c.Conf, "list", "--limit", "5"}, strings.NewReader(""), &out, &errOut)
	var r struct {
		Tasks []json.RawMessage `json:"tasks"`
		More  int               `json:"more"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Tasks) != 5 || r.More != cmdutil.DefaultTableLimit-2 {
		t.Errorf("list --limit 5: %v, %d tasks and %d more\n%s", err, len(r.Tasks), r.More, out.String())
	}
}

// list --status READY --limit N asks the source for the first screen of
// its queue (sources.List): the same tasks, in the same order, as the
// first N of the whole list; a SQL queue reads one past the limit, so the
// answer says the list is truncated without counting the rest.
func TestListReadyLimitIsTheQueuesFirstScreen(t *testing.T) {
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource)
	for i := range 12 {
		prio := []string{"low", "medium", "high"}[i%3]
		c.Run(0, "create", "--title", "job", "--priority", prio)
	}
	list := func(args ...string) (ids []string, more *int, truncated bool) {
		var out bytes.Buffer
		if code := cmdtest.Program(context.Background(), append([]string{"--config", c.Conf, "list"}, args...), strings.NewReader(""), &out, &bytes.Buffer{}); code != 0 {
			t.Fatalf("list %v: exit %d %s", args, code, out.String())
		}
		var r struct {
			Tasks []struct {
				PageID string `json:"page_id"`
			} `json:"tasks"`
			More      *int `json:"more"`
			Truncated bool `json:"truncated"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, t := range r.Tasks {
			ids = append(ids, t.PageID)
		}
		return ids, r.More, r.Truncated
	}
	all, more, truncated := list("--status", "READY")
	if len(all) != 12 || more != nil || truncated {
		t.Fatalf("list --status READY: %d tasks, more %v, truncated %v", len(all), more, truncated)
	}
	first, more, truncated := list("--status", "READY", "--limit", "5")
	if strings.Join(first, ",") != strings.Join(all[:5], ",") || !truncated || more != nil {
		t.Fatalf("list --status READY --limit 5: %v (more %v, truncated %v), want the first 5 of %v, truncated, uncounted", first, more, truncated, all)
	}
	if _, more, truncated := list("--limit", "5"); !truncated || more == nil || *more != 7 {
		t.Fatalf("list --limit 5 (every state, read whole): more %v, truncated %v; want 7 more", more, truncated)
	}
	if got, more, truncated := list("--status", "READY", "--limit", "12"); len(got) != 12 || more != nil || truncated {
		t.Fatalf("list --status READY --limit 12 of 12: %d tasks, more %v, truncated %v", len(got), more, truncated)
	}
}
