package model

// Door is where a request comes in: each names who acts in its own way,
// and a person's own-claim path is open at two of them only.
type Door string

// The doors.
const (
	DoorDashboard Door = "dashboard" // the person at the dashboard (actor)
	DoorCLI       Door = "cli"       // the claimdeck command line: the configured actor
	DoorNtask     Door = "ntask"     // the ntask grammar: NOTION_AGENT_USER_ID, else the actor
	DoorMCPStdio  Door = "mcp-stdio" // a local MCP client: the agent name it gives, else the actor
	DoorMCPHTTP   Door = "mcp-http"  // a remote MCP client: its configured name, NAME@mcp-http
	DoorSSH       Door = "ssh"       // the dashboard over SSH: the person the key belongs to
	DoorSweep     Door = "sweep"     // the escalation sweep's rescues (claimdeck sweep, node watch)
)

// Actor is who a request acts as, and through which door: recorded in the
// task's trail and the audit log.
type Actor struct {
	Name string
	Door Door
}

// Person reports whether the actor is the person at the dashboard (on
// this terminal or over SSH, known by their key) or at the claimdeck
// command line: the only callers whose HUMAN:<name> claims are their own
// to finish without a token. An agent never is, whatever name it gives.
func (a Actor) Person() bool {
	return a.Door == DoorDashboard || a.Door == DoorCLI || a.Door == DoorSSH
}
