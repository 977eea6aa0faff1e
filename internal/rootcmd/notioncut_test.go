package rootcmd_test

import (
	"strings"
	"testing"

	"github.com/claimdeck/claimdeck/internal/cmdutil/cmdtest"
)

// A Notion queue larger than one query answers, all created in one
// minute, cannot be read whole: `list` and `ntask list` fail saying the
// result was cut, rather than print the first pages as the queue.
func TestListOfACutNotionQueueSaysSo(t *testing.T) {
	yaml, w := cmdtest.NotionSource(t)
	c := cmdtest.NewCLI(t, yaml)
	w.Srv.SetQueryResultLimit(2)
	// Five: should a minute turn between two creates, one side still holds
	// more than a query answers.
	for range 5 {
		c.Run(0, "create", "--title", "one minute")
	}
	if r := c.Run(5, "list"); r.Error.Code != "API_ERROR" || !strings.Contains(r.Error.Message, "query_result_limit_reached") {
		t.Fatalf("list of a cut queue: %+v", r.Error)
	}
	v, code := cmdtest.NtaskIn(t, c, t.TempDir(), "list")
	if msg, _ := v["error"].(map[string]any)["message"].(string); code != 30 || !strings.Contains(msg, "per-query result limit") {
		t.Fatalf("ntask list of a cut queue exited %d: %v", code, v)
	}
}
