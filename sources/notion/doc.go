// Package notion is the Source for task queues kept in a Notion database:
// seed 002's "ntask" pull queue, seed 000's claim protocol and seed 001's
// mesh hand-off, or a custom property mapping.
//
// It speaks Notion-Version 2025-09-03 — a database holds data sources, and
// the tasks live in one of them — through a thin layer of its own that
// decodes into github.com/jomei/notionapi's page and property types (the
// library has no data sources; it is not forked). Its RoundTripper
// rate-limits per integration token, never lets an update un-trash a page
// and strips property types the library cannot decode. Reads are retried;
// writes never blindly: a failed write is judged by re-reading. Clearing a
// select, number or date sends a real JSON null.
//
// Notion has no transactions and no conditional writes: a claim is an
// update, a settle delay and a verifying page GET. That narrows the race
// between two claimers but cannot close it, so Caps.AtomicClaim is false
// (README.md gives the measured double-claim rates).
//
// The package knows Notion's wire format and the seeds' property names;
// nothing outside it does. The emulator the tests run against lives in
// notionemu.
package notion
