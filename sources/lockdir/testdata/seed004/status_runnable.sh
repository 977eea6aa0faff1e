#!/usr/bin/env bash
# Seed 004, "Querying Task Status", with the one change that lets bash run
# it: the `2>/dev/null` after each `for … in` word list is removed.
# List all active locks
echo "=== Active Tasks ==="
for f in project/.locks/*.lock; do
  [ -f "$f" ] && python3 -c "import json; d=json.load(open('$f')); print(f\"  {d['task_id']}: {d['agent']} (since {d['claimed_at']})\")"
done

# List completed tasks
echo "=== Completed Tasks ==="
for f in project/.locks/*.done; do
  [ -f "$f" ] && python3 -c "import json; d=json.load(open('$f')); print(f\"  {d['task_id']}: {d['agent']} (completed {d.get('completed_at','unknown')})\")"
done

# List failed tasks
echo "=== Failed Tasks ==="
for f in project/.locks/*.failed; do
  [ -f "$f" ] && python3 -c "import json; d=json.load(open('$f')); print(f\"  {d['task_id']}: {d['agent']} - {d.get('reason','unknown')}\")"
done
