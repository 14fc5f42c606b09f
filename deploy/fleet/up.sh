#!/usr/bin/env bash
# The whole fleet on one machine (issue 27): three instances of the service behind nginx
# (deploy/nginx.conf), sharing a Redis Cluster of three masters and a PostgreSQL history store.
# Everything runs from the checkout as the current user, under $FLEET_DIR; deploy/fleet/down.sh
# stops it (by the PIDs recorded here).
#
#   deploy/fleet/up.sh                 nginx on :8080, instances :8081-8083, Redis :8091-8093, PostgreSQL :8100
#   FLEET_PORT_BASE=20000 deploy/fleet/up.sh   the same ports from 20000 (nginx 20000, instances 20001-20003, …)
#   FLEET_DIR=/tmp/fleet               where state, logs and pid files go (default data/fleet)
#   DATABASE_URL=postgres://…          use that PostgreSQL instead of starting one
#   KEYS_FILE=…                        the keys file of every instance (default config/keys.yaml)
#   MDQS__…=…                          any setting, passed on to every instance (docs/configuration.md)
#
# Needs: redis-server and redis-cli (7.x), nginx, and PostgreSQL's initdb/pg_ctl (unless
# DATABASE_URL is given; as root they run as the `postgres` user). Prints the fleet's URLs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
FLEET_DIR="${FLEET_DIR:-$ROOT/data/fleet}"
BASE="${FLEET_PORT_BASE:-8080}"
NGINX_PORT="$BASE"
INSTANCE_PORTS=("$((BASE + 1))" "$((BASE + 2))" "$((BASE + 3))")
REDIS_PORTS=("$((BASE + 11))" "$((BASE + 12))" "$((BASE + 13))")
PG_PORT="$((BASE + 20))"
NODE="$ROOT/node_modules/.bin/node"
[ -x "$NODE" ] || NODE="$(command -v node)"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

mkdir -p "$FLEET_DIR"/{redis,logs,run,nginx/logs}
FLEET_DIR="$(cd "$FLEET_DIR" && pwd)"
PIDS="$FLEET_DIR/run"
if compgen -G "$PIDS/*.pid" >/dev/null; then
  echo "a fleet is already running from $FLEET_DIR (pid files in $PIDS): deploy/fleet/down.sh first" >&2
  exit 1
fi
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*"; }
fail() { echo "up.sh: $*" >&2; "$ROOT/deploy/fleet/down.sh" >/dev/null 2>&1 || true; exit 1; }
wait_for() { # what, command...
  local what="$1"; shift
  for _ in $(seq 1 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "timed out waiting for $what"
}
export FLEET_DIR

# ---- Redis Cluster: three masters, every slot assigned ----
for port in "${REDIS_PORTS[@]}"; do
  redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file "nodes-$port.conf" \
    --cluster-node-timeout 2000 --dir "$FLEET_DIR/redis" --save "" --appendonly no \
    --maxmemory 256mb --maxmemory-policy allkeys-lru \
    --daemonize yes --pidfile "$PIDS/redis-$port.pid" --logfile "$FLEET_DIR/logs/redis-$port.log"
done
for port in "${REDIS_PORTS[@]}"; do wait_for "redis-server on $port" redis-cli -p "$port" ping; done
NODES=()
for port in "${REDIS_PORTS[@]}"; do NODES+=("127.0.0.1:$port"); done
redis-cli --cluster create "${NODES[@]}" --cluster-replicas 0 --cluster-yes >"$FLEET_DIR/logs/cluster-create.log" 2>&1 \
  || fail "redis-cli --cluster create failed (see $FLEET_DIR/logs/cluster-create.log)"
cluster_ok() { for port in "${REDIS_PORTS[@]}"; do redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' || return 1; done; }
wait_for "cluster_state:ok" cluster_ok
log "Redis Cluster: ${NODES[*]}"

# ---- PostgreSQL: the shared history store ----
if [ -z "${DATABASE_URL:-}" ]; then
  PG_BIN="$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | tail -n 1 || true)")"
  [ -x "$PG_BIN/initdb" ] || PG_BIN="$(dirname "$(command -v initdb 2>/dev/null || echo /none/initdb)")"
  [ -x "$PG_BIN/initdb" ] || fail "no PostgreSQL (initdb) found: install postgresql or set DATABASE_URL"
  PG_DATA="$FLEET_DIR/pg"
  as_pg=()
  if [ "$(id -u)" = 0 ]; then
    # initdb refuses to run as root.
    as_pg=(runuser -u postgres --)
    chmod o+x "$FLEET_DIR"  # the postgres user reaches its directory (a mktemp -d is 700)
    mkdir -p "$PG_DATA" && chown postgres "$PG_DATA" && chmod 700 "$PG_DATA"
    chown postgres "$FLEET_DIR/logs"
  fi
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust >"$FLEET_DIR/logs/initdb.log" 2>&1 || fail "initdb failed (see $FLEET_DIR/logs/initdb.log)"
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$FLEET_DIR/logs/postgres.log" -w \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PG_DATA" start >/dev/null || fail "PostgreSQL did not start (see $FLEET_DIR/logs/postgres.log)"
  head -n 1 "$PG_DATA/postmaster.pid" >"$PIDS/postgres.pid"
  echo "$PG_BIN" >"$FLEET_DIR/run/pg-bin"
  # The cluster's own `postgres` database holds the history tables (created by the first instance).
  DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
  log "PostgreSQL: $DATABASE_URL ($PG_DATA)"
else
  log "PostgreSQL: the given DATABASE_URL"
fi

# ---- three instances ----
CLUSTER_YAML="$(printf '"%s", ' "${NODES[@]}")"
cat >"$FLEET_DIR/config.yaml" <<YAML
# Written by deploy/fleet/up.sh: what the three instances share.
server:
  trustProxy: 127.0.0.1            # behind nginx on this machine: the client address comes from X-Forwarded-For
  pidFile: ""                      # up.sh records each instance's pid in $FLEET_DIR/run
redis:
  url: ""
  cluster: [${CLUSTER_YAML%, }]
  instances: 3
history:
  backend: postgres                # DATABASE_URL
YAML
for i in 0 1 2; do
  port="${INSTANCE_PORTS[$i]}"
  (
    cd "$ROOT"
    # The fleet's Redis is the cluster its config names: a REDIS_URL from the caller's environment
    # (a CI script's single node) would be a second topology, which the config refuses.
    unset REDIS_URL
    export PORT="$port" HOST=127.0.0.1 CONFIG_FILE="$FLEET_DIR/config.yaml" DATABASE_URL KEYS_FILE="${KEYS_FILE:-$ROOT/config/keys.yaml}"
    export LOG_FORMAT=json NODE_ENV=production
    nohup "$NODE" --max-semi-space-size=4 src/server.ts >>"$FLEET_DIR/logs/mdqs-$port.log" 2>&1 &
    echo $! >"$PIDS/mdqs-$port.pid"
  )
  # One at a time: the first one creates the history schema.
  wait_for "the instance on $port (/readyz)" curl -fsS "http://127.0.0.1:$port/readyz"
  log "instance: http://127.0.0.1:$port (pid $(cat "$PIDS/mdqs-$port.pid"), log $FLEET_DIR/logs/mdqs-$port.log)"
done

# ---- nginx in front (deploy/nginx.conf, ports and paths of this fleet) ----
sed -e "s|listen 8080;|listen 127.0.0.1:$NGINX_PORT;|" \
    -e "s|server 127.0.0.1:8081 |server 127.0.0.1:${INSTANCE_PORTS[0]} |" \
    -e "s|server 127.0.0.1:8082 |server 127.0.0.1:${INSTANCE_PORTS[1]} |" \
    -e "s|server 127.0.0.1:8083 |server 127.0.0.1:${INSTANCE_PORTS[2]} |" \
    -e "s|access_log [^;]*;|access_log $FLEET_DIR/logs/nginx-access.log;|" \
    -e "s|error_log [^;]*;|error_log $FLEET_DIR/logs/nginx-error.log warn;|" \
    -e "s|^worker_processes auto;|worker_processes 1;\npid $PIDS/nginx.pid;\nerror_log $FLEET_DIR/logs/nginx-error.log warn;|" \
    "$ROOT/deploy/nginx.conf" >"$FLEET_DIR/nginx/nginx.conf"
"$NGINX" -p "$FLEET_DIR/nginx" -c "$FLEET_DIR/nginx/nginx.conf" -t >/dev/null 2>&1 || fail "nginx -t refused $FLEET_DIR/nginx/nginx.conf"
"$NGINX" -p "$FLEET_DIR/nginx" -c "$FLEET_DIR/nginx/nginx.conf"
wait_for "nginx on $NGINX_PORT" curl -fsS "http://127.0.0.1:$NGINX_PORT/healthz"

cat >"$FLEET_DIR/fleet.env" <<ENV
FLEET_URL=http://127.0.0.1:$NGINX_PORT
FLEET_INSTANCES=${INSTANCE_PORTS[*]}
FLEET_REDIS_CLUSTER=${NODES[*]}
FLEET_DATABASE_URL=$DATABASE_URL
ENV
log "fleet up: http://127.0.0.1:$NGINX_PORT (nginx) → ${INSTANCE_PORTS[*]}; stop with: FLEET_DIR=$FLEET_DIR deploy/fleet/down.sh"
