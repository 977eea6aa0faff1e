#!/usr/bin/env bash
# Seed 004, "Claiming a Task", verbatim except that TASK_ID and AGENT_NAME
# come from the environment. Run from the directory that holds project/.locks.
TASK_ID="${TASK_ID:?}"
AGENT_NAME="${AGENT_NAME:?}"
LOCK_FILE="project/.locks/${TASK_ID}.lock"

# Check if already claimed or done
if [ -f "$LOCK_FILE" ]; then
  echo "LOCK_EXISTS: task=$TASK_ID $(cat $LOCK_FILE | python3 -c 'import sys,json; d=json.load(sys.stdin); print(f\"agent={d[\"agent\"]} claimed={d[\"claimed_at\"]}\")')"
  # Check if expired (1 hour timeout)
  CLAIMED=$(cat "$LOCK_FILE" | python3 -c 'import sys,json; print(json.load(sys.stdin)["claimed_at"])')
  if python3 -c "from datetime import datetime, timezone; c=datetime.fromisoformat('$CLAIMED'.replace('Z','+00:00')); print('EXPIRED' if (datetime.now(timezone.utc)-c).seconds > 3600 else 'ACTIVE')"; then
    echo "Lock expired, reclaiming..."
  else
    echo "Task already claimed by another agent. Pick a different task."
    exit 1
  fi
fi

if [ -f "project/.locks/${TASK_ID}.done" ]; then
  echo "TASK_ALREADY_DONE: task=$TASK_ID"
  exit 0
fi

# Claim the task
cat > "$LOCK_FILE" << EOF
{
  "task_id": "$TASK_ID",
  "agent": "$AGENT_NAME",
  "claimed_at": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "expires_at": "$(date -u -v+1H +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)",
  "description": "Task description here"
}
EOF

echo "LOCK_ACQUIRED: task=$TASK_ID agent=$AGENT_NAME"
