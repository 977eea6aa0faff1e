#!/usr/bin/env bash
# Seed 004, "Completing a Task", verbatim except that TASK_ID comes from the
# environment.
TASK_ID="${TASK_ID:?}"

# Move lock to done
mv "project/.locks/${TASK_ID}.lock" "project/.locks/${TASK_ID}.done"

# Update done file with completion info
python3 -c "
import json, sys
from datetime import datetime, timezone
with open('project/.locks/${TASK_ID}.done') as f:
    d = json.load(f)
d['completed_at'] = datetime.now(timezone.utc).isoformat()
d['status'] = 'completed'
with open('project/.locks/${TASK_ID}.done', 'w') as f:
    json.dump(d, f, indent=2)
"

echo "TASK_COMPLETE: task=$TASK_ID"
