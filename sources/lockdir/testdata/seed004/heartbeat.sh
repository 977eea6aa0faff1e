#!/usr/bin/env bash
# Seed 004, "Heartbeat Extension", verbatim; the seed leaves TASK_ID to the
# caller, here the environment.
TASK_ID="${TASK_ID:?}"
# Extend lock by 1 hour
python3 -c "
import json
from datetime import datetime, timezone, timedelta
with open('project/.locks/${TASK_ID}.lock') as f:
    d = json.load(f)
d['expires_at'] = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
d['heartbeat'] = datetime.now(timezone.utc).isoformat()
with open('project/.locks/${TASK_ID}.lock', 'w') as f:
    json.dump(d, f, indent=2)
"
