// Package faults is the fault suite: real claimdeck processes working a
// queue while the suite kills them with SIGKILL, crash-restarts PostgreSQL
// under them, or storms the Notion emulator with 429s and 5xx. It then
// counts what an operator would care about: claims, double claims, double
// completions, lost completions, and tasks stuck after the run. It also
// records every command as JSON lines, one file per lane, and proves the
// merged history linearizable task by task (sources/sourcetest/lincheck).
//
// Its tests carry the build tag faults; run them with .ci/faults (short,
// also part of .ci/run) or .ci/faults long (figures for FAULTS.md).
package faults
