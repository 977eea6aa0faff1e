#!/usr/bin/env bash
# Seed 004, "Querying Task Status", verbatim. Bash rejects it: a redirection
# is not allowed in a `for … in` word list (see status_runnable.sh).
# List all active locks
echo "=== Active Tasks ==="
for f in project/.locks/*.lock 2>/dev/null; do
  [ -f "$f" ] && python3 -c "import json; d=json.load(open('$f')); print(f\"  {d['task_id']}: {d['agent']} (since {d['claimed_at']})\")"
done

# List completed tasks
echo "=== Completed Tasks ==="
for f in project/.locks/*.done 2>/dev/null; do
  [ -f "$f" ] && python3 -c "import json; d=json.load(open('$f')); print(f\"  {d['task_id']}: {d['agent']} (completed {d.get('completed_at','unknown')})\")"
done

# List failed tasks
echo "=== Failed Tasks ==="
for f in project/.locks/*.failed 2>/dev/null; do
  [ -f "$f" ] && python3 -c "import json; d=json.load(open('$f')); print(f\"  {d['task_id']}: {d['agent']} - {d.get('reason','unknown')}\")"
done
