#!/bin/sh
# The roles of the tvcs-assign image (docker/compose.yaml runs one container per role):
#   web      gunicorn with the settings of config/gunicorn.py (static files by WhiteNoise)
#   worker   a Celery worker computing runs; scale with `docker compose up --scale worker=N`
#   beat     Celery beat: the sweep that re-queues runs whose worker or message was lost
#   migrate  the database migrations (the other roles start once it has succeeded)
#   manage   any manage.py command: `docker compose run --rm web manage createsuperuser`
# Every setting comes from the environment (docker/env.example lists them).
set -eu
role=${1:-web}
[ $# -gt 0 ] && shift
case "$role" in
  web)
    exec gunicorn --config python:config.gunicorn config.wsgi "$@" ;;
  worker)
    # A node name of its own: scaled containers may share a host name (host networking), and
    # a worker that stops hands back the runs recorded under its name, and only those.
    node="worker-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')@$(cat /proc/sys/kernel/hostname)"
    echo "$node" > /tmp/celery-node-name
    # One run at a time per worker process by default: a run uses a whole core.
    exec celery --app config worker --hostname "$node" --loglevel "${TVCS_LOG_LEVEL:-INFO}" \
      --concurrency "${TVCS_WORKER_CONCURRENCY:-1}" "$@" ;;
  beat)
    exec celery --app config beat --loglevel "${TVCS_LOG_LEVEL:-INFO}" \
      --schedule "${TVCS_DATA_DIR:-/data}/celerybeat-schedule" "$@" ;;
  migrate)
    exec python /app/manage.py migrate --noinput "$@" ;;
  manage)
    exec python /app/manage.py "$@" ;;
  *)
    echo "unknown role '$role': web, worker, beat, migrate or manage" >&2
    exit 64 ;;
esac
