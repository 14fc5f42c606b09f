#!/usr/bin/env bash
# Stops the fleet deploy/fleet/up.sh started from $FLEET_DIR (default data/fleet), by the PIDs it
# recorded: nginx first (no new requests), then the instances (SIGTERM: each drains), then
# PostgreSQL (fast shutdown) and the Redis nodes. Idempotent: what is not running is skipped.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
FLEET_DIR="${FLEET_DIR:-$ROOT/data/fleet}"
PIDS="$FLEET_DIR/run"
[ -d "$PIDS" ] || { echo "no fleet in $FLEET_DIR"; exit 0; }

alive() { kill -0 "$1" 2>/dev/null; }
stop_pid() { # pid file, signal, seconds to wait
  local file="$1" signal="$2" wait="$3" pid
  [ -f "$file" ] || return 0
  pid="$(head -n 1 "$file")"
  if [ -n "$pid" ] && alive "$pid"; then
    kill "-$signal" "$pid" 2>/dev/null
    for _ in $(seq 1 $((wait * 10))); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then echo "pid $pid ($file) did not stop on SIG$signal; SIGKILL" >&2; kill -KILL "$pid" 2>/dev/null; fi
  fi
  rm -f "$file"
}

stop_pid "$PIDS/nginx.pid" QUIT 10
for file in "$PIDS"/mdqs-*.pid; do [ -e "$file" ] && stop_pid "$file" TERM 20; done
if [ -f "$PIDS/postgres.pid" ]; then
  PG_BIN="$(cat "$PIDS/pg-bin" 2>/dev/null || true)"
  as_pg=()
  [ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
  if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/pg_ctl" ]; then "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$FLEET_DIR/pg" -m fast -w stop >/dev/null 2>&1; fi
  stop_pid "$PIDS/postgres.pid" TERM 10
fi
for file in "$PIDS"/redis-*.pid; do [ -e "$file" ] && stop_pid "$file" TERM 10; done
rm -f "$PIDS/pg-bin" "$FLEET_DIR/fleet.env"
echo "fleet in $FLEET_DIR stopped"
