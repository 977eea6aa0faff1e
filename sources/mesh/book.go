package mesh

import (
	"strings"
	"time"

	"github.com/claimdeck/claimdeck/model"
)

// maxBookSize bounds the node health record: a few lines per node.
const maxBookSize = 4 << 20

// Book is the one record of node health every door reads. Whoever pings —
// the dashboard's poller, `claimdeck node watch`, `sweep --ping` — writes
// each node's status, since when, its consecutive failures and its last
// error there after every round; `doctor`, `list --filter node:`, `get`,
// `next`, `sweep` and MCP read it over the registry, so they agree with the
// dashboard within one ping round. The file is JSON:
//
//	{"nodes": {"ORACLE": {"status": "down", "since": "…", "last_seen": "…",
//	  "checked_at": "…", "failures": 3, "last_error": "…", "by": "dashboard"}}}
//
// It holds no token and no URL. Failures count across writers, so three
// cron sweeps with --ping make a dead node DOWN as three dashboard rounds do.
type Book struct{ file stateFile }

// bookEntry is one node in the record.
type bookEntry struct {
	Status    string    `json:"status"`
	Since     time.Time `json:"since,omitzero"`
	LastSeen  time.Time `json:"last_seen,omitzero"`
	CheckedAt time.Time `json:"checked_at"`
	Failures  int       `json:"failures"`
	LastError string    `json:"last_error,omitempty"`
	By        string    `json:"by,omitempty"`
}

type bookFile struct {
	Nodes map[string]bookEntry `json:"nodes"`
}

// OpenBook is the record at path; nothing is read until it is used, and a
// missing file is an empty record.
func OpenBook(path string) *Book {
	return &Book{file: stateFile{path: path, what: "node health record", limit: maxBookSize}}
}

// Path is where the record lives.
func (b *Book) Path() string { return b.file.path }

func (b *Book) read() (map[string]bookEntry, error) {
	var f bookFile
	if err := b.file.load(&f); err != nil {
		return nil, err
	}
	out := make(map[string]bookEntry, len(f.Nodes))
	for name, e := range f.Nodes {
		out[strings.ToUpper(name)] = e
	}
	return out, nil
}

// Nodes is the registry's nodes as the record last saw them: a node's
// entry wins over the registry's status unless the registry was written
// after the entry (seed 001's own scripts update last_seen there).
func (b *Book) Nodes(reg *Registry) ([]model.Node, error) {
	out := RegistryNodes(reg)
	if b == nil || reg == nil {
		return out, nil
	}
	entries, err := b.read()
	if err != nil {
		return out, err
	}
	for i := range out {
		if e, ok := entries[strings.ToUpper(out[i].Name)]; ok && !e.CheckedAt.Before(out[i].LastSeen) {
			e.over(&out[i])
		}
	}
	return out, nil
}

// RegistryNodes is the mesh as the registry file alone records it.
func RegistryNodes(reg *Registry) []model.Node {
	if reg == nil {
		return nil
	}
	out := make([]model.Node, len(reg.Nodes))
	for i, n := range reg.Nodes {
		out[i] = model.Node{Name: n.Name, Webhook: n.Webhook, Health: n.Health, Status: n.Status, LastSeen: n.LastSeen}
	}
	return out
}

// over lays the entry on n.
func (e bookEntry) over(n *model.Node) {
	n.Status, n.Since, n.RecordedBy = parseNodeStatus(e.Status), e.Since, e.By
	n.Failures, n.LastErr = e.Failures, e.LastError
	if e.LastSeen.After(n.LastSeen) {
		n.LastSeen = e.LastSeen
	}
}

// entryOf is n as the record keeps it, checked at at by by.
func entryOf(n model.Node, at time.Time, by string) bookEntry {
	return bookEntry{Status: strings.ToLower(n.Status.String()), Since: n.Since, LastSeen: n.LastSeen,
		CheckedAt: at, Failures: n.Failures, LastError: n.LastErr, By: by}
}

// write runs fn on the record's entries while holding the file, and saves
// what fn leaves. Another writer's round between our read and our save
// cannot be lost: both happen under the lock.
func (b *Book) write(fn func(entries map[string]bookEntry)) error {
	release, err := b.file.hold()
	if err != nil {
		return err
	}
	defer release()
	entries, err := b.read()
	if err != nil {
		return err
	}
	fn(entries)
	return b.file.save(bookFile{Nodes: entries})
}
