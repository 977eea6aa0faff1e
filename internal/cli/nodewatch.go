package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
)

// nodeJSON is a node's health as `node watch` prints it and `doctor`
// names a DOWN node: status, since when, why, and who recorded it.
type nodeJSON struct {
	Node       string `json:"node"`
	Status     string `json:"status"`
	Since      string `json:"since,omitempty"`
	LastSeen   string `json:"last_seen,omitempty"`
	Failures   int    `json:"failures"`
	LastError  string `json:"last_error,omitempty"`
	RecordedBy string `json:"recorded_by,omitempty"`
}

func nodeOut(n model.Node) nodeJSON {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	return nodeJSON{Node: n.Name, Status: n.Status.String(), Since: stamp(n.Since), LastSeen: stamp(n.LastSeen),
		Failures: n.Failures, LastError: model.Redact(n.LastErr), RecordedBy: n.RecordedBy}
}

func (a *app) nodeWatchCommand() *cobra.Command {
	var rounds int
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Ping every node of the registry and record its health for every other command",
		Long: `node watch pings every node of mesh.registry every mesh.ping_every, as the
dashboard does, and writes each round to the node health record
(mesh.health): after mesh.down_after consecutive failures a node is DOWN,
with the time it went down, and doctor, list --filter node:, get, next,
sweep and MCP read it so. It prints one JSON line per node at the first
round and one more whenever a node's status changes; --rounds stops after
that many rounds (0: until interrupted).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			reg, err := a.Registry()
			if err != nil {
				return err
			}
			if reg == nil {
				return model.Errorf(model.CodeMisconfigured, "node watch", "", "no mesh: set mesh.registry to seed 001's mesh-nodes.json")
			}
			p, err := a.Poller(reg, "node watch")
			if err != nil {
				return err
			}
			shown := map[string]model.NodeStatus{}
			tick := time.NewTicker(a.Cfg.Mesh.PingEvery)
			defer tick.Stop()
			for round := 1; ; round++ {
				for _, n := range p.PollOnce(ctx) {
					if was, ok := shown[n.Name]; ok && was == n.Status {
						continue
					}
					shown[n.Name] = n.Status
					if err := a.Out().JSON(nodeOut(n)); err != nil {
						return err
					}
				}
				if err := p.BookErr(); err != nil {
					return model.Wrap(model.CodeMisconfigured, "node watch", "", err)
				}
				if rounds > 0 && round >= rounds {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
			}
		},
	}
	cmd.Flags().IntVar(&rounds, "rounds", 0, "stop after this many ping rounds (0: until interrupted)")
	return cmd
}
