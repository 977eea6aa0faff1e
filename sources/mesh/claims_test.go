package mesh

import (
	"fmt"
	"testing"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

func TestDownClaims(t *testing.T) {
	now := time.Now()
	agent := func(id, name, node string) *model.Task {
		return &model.Task{Source: "q", ID: id, Key: "KEY-" + id, State: model.StateClaimed,
			Claim: model.Claim{Holder: model.HolderAgent, Name: name, Node: node, ClaimedAt: now, Expires: now.Add(time.Hour)}}
	}
	nodes := []model.Node{
		{Name: "ALPHA", Status: model.NodeDown, ClaimedTasks: []string{"a-listed", "KEY-a-key", "q/a-ref", "moved", "shared", "human"}},
		{Name: "BRAVO", Status: model.NodeDegraded, ClaimedTasks: []string{"shared"}},
		{Name: "CHARLIE", Status: model.NodeHealthy},
	}
	human := agent("human", "HUMAN:alice", "")
	human.Claim.Holder = model.HolderHuman
	done := agent("done", "alpha-1", "ALPHA")
	done.State = model.StateDone
	tasks := []*model.Task{
		agent("a-node", "x", "alpha"),      // claim names the DOWN node (any case)
		agent("a-mapped", "alpha-1", ""),   // agent mapped to the DOWN node
		agent("a-listed", "unmapped", ""),  // only the DOWN node's report places it
		agent("a-key", "unmapped", ""),     // reported by display key
		agent("a-ref", "unmapped", ""),     // reported by source/id
		agent("moved", "charlie-1", ""),    // listed by ALPHA, but now held on CHARLIE
		agent("shared", "unmapped", ""),    // a live node still reports it
		agent("b-node", "x", "BRAVO"),      // degraded is not DOWN
		agent("unknown-node", "x", "ZULU"), // not in the registry
		agent("unplaced", "nobody", ""),    // nothing places it
		human, done,
	}
	var got []string
	for _, c := range DownClaims(tasks, nodes, map[string]string{"ALPHA-1": "ALPHA", "charlie-1": "CHARLIE"}) {
		got = append(got, fmt.Sprintf("%s@%s by %s", c.Task.ID, c.Node, c.By))
	}
	want := "[a-key@ALPHA by claimed_tasks a-listed@ALPHA by claimed_tasks a-mapped@ALPHA by holder mapping a-ref@ALPHA by claimed_tasks a-node@alpha by claim node]"
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
}
