// Package lincheck proves lease histories linearizable: it reads what
// agents and operators did to a queue (each operation with its invocation
// and response time, its outcome and what the answer carried) and asks
// Porcupine whether some order of those operations, each taking effect at
// one instant between its call and its return, is a run of the lease
// protocol. Histories are partitioned by task, so a long run checks in
// seconds.
//
// The protocol is stated here a second time, on purpose. model/policy.go
// holds the rules the backends run (Claimable, Rescuable, TokenCurrent);
// a checker that called them would agree with the code by construction and
// could catch nothing those rules get wrong. So this package imports no
// rule of the project: its model is written from the seeds and SPEC §3 —
// seed 002's claim, heartbeat and complete/block/review/cancel with tokens
// as fences, SPEC's takeover, force-release, cancel and hand-off, and the
// rescue of an agent's claim once its lease and the grace have passed — and
// it judges expiry on the backend's clock: every time in a history is the
// backend's clock (on one host, the host's clock), and a time the answer
// carries is trusted to the history's resolution.
//
// Where the outcome of an operation is unknown — its process was killed
// (SIGKILL) or it answered API_ERROR, which may follow a write that landed —
// the model lets it have taken effect or not. A killed operation never
// returns, as Porcupine treats it. A claim-next that found nothing says no
// task was claimable for that agent, so it joins every task's partition
// while that task can still change. A claim-next whose answer was lost
// names no task: the task's own trail (its claim and rescue entries, read
// at the end) tells which task an agent took that no answered claim
// explains, and that entry becomes one claim of unknown outcome, whose
// window ends at the agent's next call plus a second (a server finishes a
// request whose client died; Porcupine would otherwise have to try every
// lost claim-next of the run in every task). A create whose answer was
// lost joins every task no create made. Each operation is judged at some
// instant of its own window; the checker does not also force those
// instants to be monotone across operations, which makes it weaker, never
// stricter, than the protocol.
//
// What a history cannot say comes in Rules: the grace, the default lease,
// how finely answers print times, and whether claim-next rescues at all
// (seed 002's Notion queue does not: a sweep puts expired claims back).
//
// It lives beside the conformance kit (sources/sourcetest) because it is
// the same kind of thing: the protocol stated once for tests, used by the
// fault suite on real processes and by its own tests on broken variants of
// the in-memory queue. No command wires it.
package lincheck
