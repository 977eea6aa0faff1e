#!/usr/bin/env bash
# Seed 004, "Failing a Task", verbatim except that TASK_ID and REASON come
# from the environment.
TASK_ID="${TASK_ID:?}"
REASON="${REASON:?}"

# Move lock to failed
mv "project/.locks/${TASK_ID}.lock" "project/.locks/${TASK_ID}.failed"

# Update with failure info
python3 -c "
import json
from datetime import datetime, timezone
with open('project/.locks/${TASK_ID}.failed') as f:
    d = json.load(f)
d['failed_at'] = datetime.now(timezone.utc).isoformat()
d['status'] = 'failed'
d['reason'] = '$REASON'
with open('project/.locks/${TASK_ID}.failed', 'w') as f:
    json.dump(d, f, indent=2)
"

echo "TASK_FAILED: task=$TASK_ID reason=$REASON"
