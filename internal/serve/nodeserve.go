package serve

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/internal/cmdutil"
	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/mesh"
	"github.com/claimdeck/claimdeck/sources/webserver"
)

func (a *app) nodeServeCommand() *cobra.Command {
	var name, listen, tokenEnv string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Answer seed 001's POST /hooks/health (and /hooks/agent) for one node",
		Long: `node serve runs one mesh node: POST /hooks/health answers seed 001's
report (node, status, last_task_at, queue_depth, claimed_tasks) from the
configured sources, and POST /hooks/agent accepts mesh notifications. Both
need "Authorization: Bearer <token>": the registry entry's token or
token_env for --name, or --token-env. It prints {"ok": true, "node": …,
"listen": …} once listening and serves until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if strings.TrimSpace(name) == "" {
				return model.Errorf(model.CodeMisconfigured, "node serve", "", "--name is required")
			}
			token, err := a.nodeToken(name, tokenEnv)
			if err != nil {
				return err
			}
			if err := token.CheckStrength(); err != nil {
				return model.Errorf(model.CodeMisconfigured, "node serve", "", "node %s: %v", name, err)
			}
			srcs, err := a.OpenAll(ctx)
			if err != nil {
				return err
			}
			defer cmdutil.CloseAll(srcs)
			var agents []string
			for agent, node := range a.Cfg.Mesh.Holders {
				if strings.EqualFold(node, name) {
					agents = append(agents, agent)
				}
			}
			status := mesh.StatusFrom(name, agents, cmdutil.TaskSources(srcs), time.Now)
			ln, err := a.Listen("node serve", listen)
			if err != nil {
				return err
			}
			srv := webserver.New(mesh.NodeHandler(name, token, status, mesh.NewInbox(token.Reveal())), webserver.Limits{})
			if err := a.Out().JSON(map[string]any{"ok": true, "node": name, "listen": ln.Addr().String()}); err != nil {
				ln.Close()
				return err
			}
			return model.Wrap(model.CodeAPIError, "node serve", "", srv.Serve(ctx, ln))
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the node's name, as in the registry (e.g. SANDMAN)")
	f.StringVar(&listen, "listen", "127.0.0.1:18789", "address to listen on")
	f.StringVar(&tokenEnv, "token-env", "", "environment variable holding the bearer token (default: the registry's)")
	return cmd
}

// nodeToken finds the bearer token node serve requires. It is never
// printed: mesh.Token redacts itself.
func (a *app) nodeToken(name, tokenEnv string) (mesh.Token, error) {
	if tokenEnv != "" {
		if t := mesh.Token(os.Getenv(tokenEnv)); t.Set() {
			return t, nil
		}
		return "", model.Errorf(model.CodeMisconfigured, "node serve", "", "--token-env %s is unset or empty", tokenEnv)
	}
	reg, err := a.Registry()
	if err != nil {
		return "", err
	}
	if reg != nil {
		if n, ok := reg.Node(name); ok && n.Token.Set() {
			return n.Token, nil
		}
	}
	return "", model.Errorf(model.CodeMisconfigured, "node serve", "",
		"no token for node %s: give it token or token_env in the registry, or --token-env; an endpoint without one is not served", name)
}
