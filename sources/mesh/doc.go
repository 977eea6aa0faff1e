// Package mesh speaks seed 001's node mesh: the node registry file
// (mesh-nodes.json), the health poller that marks a node DOWN after
// consecutive failed pings, the node-side `POST /hooks/health` and
// `POST /hooks/agent` endpoints, and the escalation sweep that marks and
// notifies once per level. Which claims a DOWN node holds, and how far up
// the ladder a task stands, is model.Classify's to say; the sweep asks it.
//
// It knows no backend's schema: tasks arrive as model.Task values through
// the small consumer interfaces declared here. Bearer tokens travel as Token
// values, which redact themselves wherever they are printed or marshalled.
package mesh
