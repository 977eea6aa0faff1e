package mesh

import (
	"cmp"
	"slices"
	"strings"

	"github.com/claimdeck/claimdeck/model"
)

// DownClaim is a task whose holder runs on a DOWN node: it shows as stale at
// once, whatever its lease says.
type DownClaim struct {
	Task *model.Task
	Node string
	// By says how the holder was placed on the node: "claim node",
	// "holder mapping" or "claimed_tasks".
	By string
}

// DownClaims says which AGENT-held tasks are held by DOWN nodes. A task is
// placed on a node by its claim's Node, else by holders (agent name → node
// name, from config), else by the claimed_tasks a node last reported. An
// explicit placement wins over a DOWN node's last report, and a task that a
// live node still reports is never counted, so a claim taken over by a
// healthy node after the crash is left alone.
func DownClaims(tasks []*model.Task, nodes []model.Node, holders map[string]string) []DownClaim {
	status := map[string]model.NodeStatus{}
	listedBy := map[string][]model.Node{}
	for _, n := range nodes {
		status[strings.ToUpper(n.Name)] = n.Status
		for _, id := range n.ClaimedTasks {
			listedBy[id] = append(listedBy[id], n)
		}
	}
	byAgent := map[string]string{}
	for agent, node := range holders {
		byAgent[strings.ToUpper(agent)] = node
	}
	var out []DownClaim
	for _, t := range tasks {
		if t.State != model.StateClaimed || t.Claim.Holder != model.HolderAgent || t.Problem != "" {
			continue
		}
		node, by := t.Claim.Node, "claim node"
		if node == "" {
			node, by = byAgent[strings.ToUpper(t.Claim.Name)], "holder mapping"
		}
		if node != "" {
			if status[strings.ToUpper(node)] == model.NodeDown {
				out = append(out, DownClaim{Task: t, Node: node, By: by})
			}
			continue
		}
		if n, ok := onlyDownLister(t, listedBy); ok {
			out = append(out, DownClaim{Task: t, Node: n, By: "claimed_tasks"})
		}
	}
	slices.SortFunc(out, func(a, b DownClaim) int {
		return cmp.Or(strings.Compare(a.Node, b.Node), strings.Compare(a.Task.Ref(), b.Task.Ref()))
	})
	return out
}

// onlyDownLister finds the DOWN node whose claimed_tasks name the task, as
// long as no node that is not DOWN names it too. Nodes report native ids,
// display keys or source/id references, so all three are tried.
func onlyDownLister(t *model.Task, listedBy map[string][]model.Node) (string, bool) {
	var down []string
	for _, id := range []string{t.ID, t.Key, t.Ref()} {
		if id == "" {
			continue
		}
		for _, n := range listedBy[id] {
			if n.Status != model.NodeDown {
				return "", false
			}
			down = append(down, n.Name)
		}
	}
	if len(down) == 0 {
		return "", false
	}
	return slices.Min(down), true
}
