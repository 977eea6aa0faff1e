// Package model holds claimdeck's domain types and the pure policy every
// backend and view shares: which tasks an agent may pull and in what order,
// how healthy a lease is, how a task stands (Classify: its rung on the
// escalation ladder, whether its holder's node is DOWN, and why), and the
// error codes of the ntask contract.
//
// It knows nothing of I/O: no SQL, no Notion, no files, no terminal. Every
// policy is a function of (task, now, config) so that it can be tested as a
// table and so that the dashboard shows exactly what an agent would get.
package model
