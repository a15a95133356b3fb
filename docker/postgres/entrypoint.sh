#!/bin/sh
# Makes the cluster, its owner (POSTGRES_USER with POSTGRES_PASSWORD) and POSTGRES_DB on the
# first start, in PGDATA; then runs the server on PGPORT (5432), on every address.
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (docker/.env)}"
db=${POSTGRES_DB:-$POSTGRES_USER}
port=${PGPORT:-5432}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  printf '%s' "$POSTGRES_PASSWORD" > "$password_file"
  initdb --pgdata "$PGDATA" --username "$POSTGRES_USER" --pwfile "$password_file" \
    --encoding UTF8 --locale C.UTF-8 --auth-local trust --auth-host scram-sha-256
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl --pgdata "$PGDATA" --wait --options "-c listen_addresses='' -p $port" start
  if [ "$db" != "postgres" ]; then
    createdb --port "$port" --username "$POSTGRES_USER" --owner "$POSTGRES_USER" "$db"
  fi
  pg_ctl --pgdata "$PGDATA" --wait --mode fast stop
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -p "$port" "$@"
