#!/usr/bin/env bash
# The deploy example on Aegra, scaled out on one machine: N Aegra instances (API, workers and
# lease reaper in each) sharing one PostgreSQL (runs, threads, checkpoints) and one Redis (the
# run queue and the stream's pub/sub), all on 127.0.0.1. No Docker: Debian's postgresql and
# redis-server (installed with apt-get when missing) and the `aegra` extra in the current
# Python (3.12+).
#
#   deploy/aegra/cluster.sh up [N]     start PostgreSQL, Redis and N instances (default 2)
#   deploy/aegra/cluster.sh add        start one more instance on the next port
#   deploy/aegra/cluster.sh status     what runs, and where
#   deploy/aegra/cluster.sh down       stop everything (data kept); `down --wipe` deletes it
#
# Ports: instances from AEGRA_FIRST_PORT (2026), PostgreSQL AEGRA_PG_PORT (55432), Redis
# AEGRA_REDIS_PORT (56379); data and logs in AEGRA_STATE_DIR (/tmp/funcware-aegra).
# Aegra's own settings (WORKER_COUNT, N_JOBS_PER_WORKER, LEASE_DURATION_SECONDS,
# HEARTBEAT_INTERVAL_SECONDS, REAPER_INTERVAL_SECONDS, ...) pass through from the environment.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
state="${AEGRA_STATE_DIR:-${TMPDIR:-/tmp}/funcware-aegra}"
first_port="${AEGRA_FIRST_PORT:-2026}"
pg_port="${AEGRA_PG_PORT:-55432}"
redis_port="${AEGRA_REDIS_PORT:-56379}"
python="${PYTHON:-python}"
database_url="postgresql://postgres@127.0.0.1:$pg_port/aegra"

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_bin() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
    done
    return 1
}

install_missing() {
    local packages=()
    pg_bin >/dev/null || packages+=(postgresql)
    command -v redis-server >/dev/null || packages+=(redis-server)
    [ ${#packages[@]} = 0 ] && return 0
    echo "cluster: installing ${packages[*]} from Debian" >&2
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
}

wait_healthy() {  # port, pid
    local tries=0
    until "$python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$1/health', timeout=2)" \
        >/dev/null 2>&1; do
        if ! kill -0 "$2" 2>/dev/null || [ $((tries += 1)) -gt 600 ]; then
            echo "cluster: the instance on port $1 did not start; its log:" >&2
            tail -30 "$state/aegra-$1.log" >&2
            return 1
        fi
        sleep 0.2
    done
}

start_postgres() {
    local bin
    bin="$(pg_bin)"
    mkdir -p "$state/pg"
    # As root, PostgreSQL runs as the postgres user, who must reach its data directory.
    if [ "$(id -u)" = 0 ]; then chmod a+x "$state" && chown postgres "$state/pg"; fi
    if [ ! -d "$state/pg/data" ]; then
        as_postgres "$bin/initdb" -D "$state/pg/data" -U postgres -A trust >/dev/null
    fi
    if ! as_postgres "$bin/pg_ctl" -D "$state/pg/data" status >/dev/null 2>&1; then
        as_postgres "$bin/pg_ctl" -D "$state/pg/data" -l "$state/pg/log" -w \
            -o "-p $pg_port -k $state/pg -c listen_addresses=127.0.0.1 -c max_connections=300" \
            start >/dev/null
    fi
    if ! psql -h 127.0.0.1 -p "$pg_port" -U postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'aegra'" | grep -q 1; then
        psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE DATABASE aegra"
    fi
    echo "cluster: PostgreSQL on 127.0.0.1:$pg_port (database aegra)"
}

start_redis() {
    mkdir -p "$state/redis"
    if ! redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
        redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$state/redis" \
            --appendonly yes --daemonize yes --pidfile "$state/redis.pid" \
            --logfile "$state/redis.log"
        until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done
    fi
    echo "cluster: Redis on 127.0.0.1:$redis_port"
}

start_instance() {  # port
    local port="$1" migrate=false pid
    # Only the first instance migrates the schema; the others start once it is done.
    ls "$state"/aegra-*.pid >/dev/null 2>&1 || migrate=true
    (
        cd "$here"
        DATABASE_URL="$database_url" \
            REDIS_BROKER_ENABLED=true REDIS_URL="redis://127.0.0.1:$redis_port/0" \
            AEGRA_CONFIG="$here/aegra.json" RUN_MIGRATIONS_ON_STARTUP="$migrate" \
            CRON_ENABLED=false FUNCWARE_ERROR_NOTES=message \
            nohup "$python" -m uvicorn aegra_api.main:app --host 127.0.0.1 --port "$port" \
            </dev/null >"$state/aegra-$port.log" 2>&1 &
        echo $! >"$state/aegra-$port.pid"
    )
    pid="$(cat "$state/aegra-$port.pid")"
    wait_healthy "$port" "$pid"
    echo "cluster: Aegra instance on http://127.0.0.1:$port (pid $pid)"
}

next_port() {
    local port="$first_port"
    while [ -e "$state/aegra-$port.pid" ]; do port=$((port + 1)); done
    echo "$port"
}

case "${1:-}" in
up)
    count="${2:-2}"
    "$python" -c "import aegra_api" 2>/dev/null || {
        echo "cluster: aegra_api is not importable by $python; on Python 3.12+: pip install -e '.[aegra]'" >&2
        exit 1
    }
    install_missing
    mkdir -p "$state"
    start_postgres
    start_redis
    for _ in $(seq "$count"); do start_instance "$(next_port)"; done
    ;;
add)
    start_instance "$(next_port)"
    ;;
status)
    for pidfile in "$state"/aegra-*.pid; do
        [ -e "$pidfile" ] || continue
        port="${pidfile##*/aegra-}"
        port="${port%.pid}"
        if kill -0 "$(cat "$pidfile")" 2>/dev/null; then up="running"; else up="stopped"; fi
        echo "instance http://127.0.0.1:$port pid $(cat "$pidfile") $up"
    done
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && echo "redis 127.0.0.1:$redis_port running"
    pg_isready -q -h 127.0.0.1 -p "$pg_port" && echo "postgresql 127.0.0.1:$pg_port running"
    ;;
down)
    # SIGTERM drains: runs not done within WORKER_DRAIN_TIMEOUT go back to the queue.
    for pidfile in "$state"/aegra-*.pid; do
        [ -e "$pidfile" ] || continue
        pid="$(cat "$pidfile")"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        rm -f "$pidfile"
    done
    redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    if [ -d "$state/pg/data" ]; then
        as_postgres "$(pg_bin)/pg_ctl" -D "$state/pg/data" -m fast stop >/dev/null 2>&1 || true
    fi
    if [ "${2:-}" = "--wipe" ]; then rm -rf "$state"; fi
    echo "cluster: stopped"
    ;;
*)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
