package model

import "time"

// NodeStatus is a mesh node's health as the poller last judged it.
type NodeStatus int

// Node statuses. A node is DOWN after the configured number of consecutive
// failed pings (seed 001: 3).
const (
	NodeUnknown NodeStatus = iota
	NodeHealthy
	NodeDegraded // answered, but failed the last ping(s), not yet DOWN
	NodeDown
)

func (s NodeStatus) String() string {
	switch s {
	case NodeHealthy:
		return "healthy"
	case NodeDegraded:
		return "degraded"
	case NodeDown:
		return "DOWN"
	}
	return "unknown"
}

// Node is a mesh node (seed 001's registry entry plus what pings told us).
type Node struct {
	Name    string
	Webhook string
	Health  string
	Status  NodeStatus
	// Since is when Status began, as the node health record keeps it
	// (zero when nothing has recorded it); RecordedBy names who pinged:
	// "dashboard", "node watch", "sweep".
	Since      time.Time
	RecordedBy string
	LastSeen   time.Time
	Failures   int // consecutive failed pings
	LastErr    string

	LastTaskAt   time.Time
	QueueDepth   int
	ClaimedTasks []string
	// Latency holds the most recent successful ping latencies, oldest first.
	Latency []time.Duration
}
