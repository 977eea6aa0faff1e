#!/usr/bin/env bash
# An agent on today's skill (workflow.md at 75590fd): next, claim by
# positional id, CONFLICT (20) -> next, review; NO_TASKS (10) ends the run.
# Prints "CLAIMED <page id>".
set -u
while :; do
	out=$(ntask next)
	rc=$?
	case $rc in
	0) ;;
	10) exit 0 ;;
	*) echo "next exited $rc: $out" >&2; exit 1 ;;
	esac
	id=$(jq -r .task.task_id <<<"$out")
	out=$(ntask claim "$id")
	rc=$?
	case $rc in
	0) ;;
	20) continue ;;
	*) echo "claim $id exited $rc: $out" >&2; exit 1 ;;
	esac
	echo "CLAIMED $(jq -r .task.page_id <<<"$out")"
	ntask review "$id" --summary "done" >/dev/null || { echo "review $id exited $?" >&2; exit 1; }
done
