#!/usr/bin/env bash
# An agent of the older generation (seed 002's ntask, openclaw-skills
# 2074efe): flags, exit 2 CONFLICT. It claims the next task, completes it,
# and stops when claim answers task null. Prints "CLAIMED <page id>".
set -u
name=$1
while :; do
	out=$(claimdeck claim --agent-name "$name" --run-id "run-$name-$RANDOM")
	rc=$?
	case $rc in
	0) ;;
	2) continue ;;
	*) echo "$name: claim exited $rc: $out" >&2; exit 1 ;;
	esac
	id=$(jq -r '.task.page_id // empty' <<<"$out")
	[ -n "$id" ] || exit 0
	echo "CLAIMED $id"
	tok=$(jq -r .task.lock_token <<<"$out")
	claimdeck complete --task "$id" --lock-token "$tok" --run-id "run-$name" >/dev/null || { echo "$name: complete $id exited $?" >&2; exit 1; }
done
