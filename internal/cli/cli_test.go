package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
	"github.com/claimdeck/claimdeck/model"
)

func TestShellCompletion(t *testing.T) {
	t.Setenv("CLAIMDECK_CONFIG", "/nonexistent/claimdeck.yaml") // completion must not need one
	for shell, marker := range map[string]string{"bash": "complete -o default", "zsh": "#compdef claimdeck", "fish": "complete -c claimdeck"} {
		var out, errOut bytes.Buffer
		if code := cmdtest.Program(context.Background(), []string{"completion", shell}, nil, &out, &errOut); code != 0 {
			t.Fatalf("completion %s exited %d: %s", shell, code, errOut.String())
		}
		if !strings.Contains(out.String(), marker) {
			t.Fatalf("completion %s lacks %q:\n%.300s", shell, marker, out.String())
		}
	}
	c := cmdtest.NewCLI(t, cmdtest.SQLiteSource+"  - name: locks\n    kind: lockdir\n    path: DIR/.locks\n")
	var out bytes.Buffer
	cmdtest.Program(context.Background(), []string{"__complete", "--config", c.Conf, "list", "--source", ""}, nil, &out, &out)
	if got := out.String(); !strings.Contains(got, "local\n") || !strings.Contains(got, "locks\n") {
		t.Fatalf("--source completion does not offer the configured sources:\n%s", got)
	}
}

func TestRetryingRetriesOnlyAPIErrors(t *testing.T) {
	calls := 0
	flaky := func() (int, error) {
		calls++
		if calls < 3 {
			return 0, model.Errorf(model.CodeAPIError, "next", "", "503")
		}
		return 42, nil
	}
	if v, err := cmdutil.Retrying(context.Background(), flaky); v != 42 || err != nil || calls != 3 {
		t.Fatalf("retrying a flaky call: %d %v after %d calls, want 42 after 3", v, err, calls)
	}
	calls = 0
	conflict := func() (int, error) {
		calls++
		return 0, model.Errorf(model.CodeConflict, "claim", "x", "held")
	}
	if _, err := cmdutil.Retrying(context.Background(), conflict); model.CodeOf(err) != model.CodeConflict || calls != 1 {
		t.Fatalf("a CONFLICT was retried: %d calls, %v", calls, err)
	}
	calls = 0
	down := func() (int, error) {
		calls++
		return 0, model.Errorf(model.CodeAPIError, "get", "", "down")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cmdutil.Retrying(ctx, down); model.CodeOf(err) != model.CodeAPIError {
		t.Fatalf("a cancelled retry loop returned %v", err)
	}
	if calls != 1 {
		t.Fatalf("a cancelled context still retried: %d calls", calls)
	}
}
