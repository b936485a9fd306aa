#!/usr/bin/env bash
# load.sh [SECONDS] [CLIENTS] [http|ws] -- start build/shale-server on a free
# loopback port with a scratch database, run load.js against it, stop it.
# Needs build/server-node (made by build/tests/test_server's npm ci).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
work=$(mktemp -d ${LOAD_DIR:-/tmp}/shale-server-load.XXXXXX)
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
"$build/shale-server" --db "$work/load.db" --listen 127.0.0.1:0 --quiet >"$work/out" &
pid=$!
for _ in $(seq 1 50); do grep -q '^listening' "$work/out" && break; sleep 0.1; done
addr=$(sed -n 's/^listening on //p' "$work/out")
scheme=${3:-http}
NODE_PATH=$build/server-node/node_modules SHALE_URL=$scheme://$addr SHALE_SERVER_PID=$pid \
  SECONDS=${1:-60} CLIENTS=${2:-64} node "$root/tests/server/load.js"
kill -TERM $pid
wait $pid
sqlite3 "$work/load.db" "PRAGMA integrity_check"
