#!/usr/bin/env bash
# An agent written from today's notion-task skill (references/workflow.md at
# openclaw-skills 75590fd, copied in ../ntask-v1/): it calls `ntask` from
# PATH, parses the JSON, and branches on the exit codes the Error Recovery
# Matrix lists. Nothing in it knows which backend is behind ntask.
#
# Environment: HOME is this agent's home (its lock state), HOME_B a second
# agent's; CLAIMDECK is the operator's claimdeck for the one force-release
# a person does; jq parses.
set -u

fail() { echo "FAIL: $*" >&2; exit 1; }

# run WANT CMD...: run CMD, keep its JSON in $out, fail unless it exits WANT.
run() {
	local want=$1
	shift
	out=$("$@")
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, want $want: $out"
	jq -e . >/dev/null <<<"$out" || fail "$*: stdout is not JSON: $out"
}
field() { jq -r "$1" <<<"$out"; }
want() { [ "$(field "$1")" = "$2" ] || fail "after $3: $1 is $(field "$1"), want $2: $out"; }

# 1. Doctor (once per session).
run 0 ntask doctor
want .ok true doctor

# 2. Next on an empty queue: NO_TASKS, an idle run.
run 10 ntask next
want .error.code NO_TASKS next

# Planning: a planner creates the work (Ready, so that next pulls it).
run 0 ntask create --title "Fix login bug" --priority 3 --status Ready
t1=$(field .task.task_id)
run 0 ntask create --title "Provision API key" --priority 2 --class "Fixed Date" --status ready
t2=$(field .task.task_id)
run 0 ntask create --title "Design auth schema" --priority 1 --status Ready
t3=$(field .task.task_id)

# 2. Next: the highest priority first (higher = more urgent; Fixed Date
# ranks above Standard, so t2 leads).
run 0 ntask next
want .task.task_id "$t2" next

# 3. Claim; the response carries lock_token and lock_expires.
run 0 ntask claim "$t1"
want .task.status "In Progress" claim
[ -n "$(field .task.lock_token)" ] && [ -n "$(field .task.lock_expires)" ] || fail "claim without lock_token or lock_expires: $out"
run_id=$(field .task.agent_run)

# 4. Work loop: heartbeat, and an idempotency key in a comment.
run 0 ntask heartbeat "$t1"
want .task.status "In Progress" heartbeat
run 0 ntask comment "$t1" --text "Deploying with idempotency key: $run_id"
want .ok true comment

# 5a. Review: the lock is released.
run 0 ntask review "$t1" --summary "Implemented auth flow with OAuth provider"
want .task.status Review review
run 40 ntask heartbeat "$t1"
want .error.code MISCONFIGURED "heartbeat after review"

# 5d. A reviewer sends it back, the agent claims it again, the reviewer approves.
run 0 env NOTION_AGENT_USER_ID=reviewer-1 ntask rework "$t1" --reason "Needs markdown formatting in README"
[ "$(field .task.status)" != Review ] || fail "rework left the task in Review: $out"
run 0 ntask claim "$t1"
run 0 ntask review "$t1" --summary "README formatted"
# An approval names its caller (NOTION_AGENT_USER_ID), never the configured
# person this agent works as; the agent that sent it to review cannot
# approve it too (claimdeck's rule, unless review: {self_approve: true});
# the reviewer is somebody else.
run 40 ntask approve "$t1" --summary "LGTM, my own work"
want .error.code MISCONFIGURED "a nameless approval"
run 0 env NOTION_AGENT_USER_ID=reviewer-1 ntask approve "$t1" --summary "LGTM, clean implementation"
want .task.status Done approve

# 5b. Block, then unblock; the agent claims it again.
run 0 ntask claim "$t2"
run 0 ntask block "$t2" --reason "Waiting on API access" --unblock-action "Provision API key"
want .task.status Blocked block
want .task.unblock_action "Provision API key" block
run 0 ntask unblock "$t2"
run 0 ntask claim "$t2"
want .task.status "In Progress" "claim after unblock"

# CONFLICT: a second agent claims the same task, gets 20, and runs next.
run 20 env HOME="$HOME_B" ntask claim "$t2"
want .error.code CONFLICT "a second claim"
run 0 env HOME="$HOME_B" ntask next
want .task.task_id "$t3" "next after CONFLICT"

# LOST_LOCK: a person force-releases the task; the agent's heartbeat gets
# 21 and it stops work.
page=$(field .task.page_id)
page2=$(env HOME="$HOME_B" ntask get "$t2" | jq -r .task.page_id)
"$CLAIMDECK" release --force --yes --task "$page2" --reason "agent wedged" >/dev/null || fail "force-release"
run 21 ntask heartbeat "$t2"
want .error.code LOST_LOCK "heartbeat after force-release"

# 5c. Cancel: under the lock from In Progress, idempotent once canceled,
# lock-free from Ready.
run 0 ntask claim "$t2"
run 0 ntask cancel "$t2" --reason "Duplicate of $t3"
want .task.status Canceled cancel
run 0 ntask cancel "$t2" --reason "Duplicate of $t3"
want .task.status Canceled "cancel again"
run 0 env HOME="$HOME_B" ntask cancel "$page" --reason "requirements changed"
want .task.status Canceled "lock-free cancel"

# The queue is drained: next is NO_TASKS again.
run 10 ntask next
echo "workflow ok"
