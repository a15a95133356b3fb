#!/bin/sh
# Redis with a password (given on standard input, not on the command line that `ps` shows),
# its data appended to /data so that queued runs survive a restart.
set -eu
: "${REDIS_PASSWORD:?set REDIS_PASSWORD (docker/.env)}"
printf 'requirepass %s\n' "$REDIS_PASSWORD" | exec redis-server - \
  --port "${REDIS_PORT:-6379}" --bind '* -::*' --protected-mode no --dir /data \
  --appendonly yes "$@"
