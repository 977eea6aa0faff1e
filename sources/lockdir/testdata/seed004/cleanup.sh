#!/usr/bin/env bash
# Seed 004, "Cleanup", verbatim.
# Remove all locks older than 24 hours
find project/.locks/ -name "*.lock" -mmin +1440 -delete

# Archive completed tasks
mkdir -p project/.locks/archive
mv project/.locks/*.done project/.locks/archive/ 2>/dev/null
mv project/.locks/*.failed project/.locks/archive/ 2>/dev/null
