#!/usr/bin/env bash
# test_server -- build/shale-server end to end (installed as BUILD/tests/test_server):
#  1. the real libSQL clients (@libsql/client, @libsql/hrana-client, pinned in
#     tests/server/package-lock.json, installed with `npm ci` into
#     BUILD/server-node/ once per lock file) over http:// and ws://: see
#     clients.js. If npm cannot fetch them, this part says so and is skipped.
#  2. robust.py: malformed and hostile input over raw HTTP and WebSocket;
#     proto.py: Hrana 3 in Protobuf (/v3-protobuf, hrana3-protobuf) answering
#     as JSON does, and malformed Protobuf.
#  3. the servers stop cleanly on SIGTERM (exit 0; under ASan: no leaks), one
#     of them (stop.py) with HTTP, half-sent and WebSocket connections open, and
#     the database passes the reference sqlite3's integrity_check.
# Prints "ok NAME" / "FAIL NAME" lines and "N passed, N failed".
set -u
shopt -s lastpipe # `... | tally` counts in this shell
build=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$build/.." && pwd)
src=$root/tests/server
server=$build/shale-server
work=$(mktemp -d /tmp/shale-server-test.XXXXXX)
pass=0
fail=0
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
tally() { # reads ok/FAIL lines on stdin, echoes them, counts them
  while IFS= read -r line; do
    echo "$line"
    case "$line" in
      "ok "*) pass=$((pass + 1)) ;;
      "FAIL "*) fail=$((fail + 1)) ;;
    esac
  done
}

# start_server NAME ARGS...: sets $url_NAME; the server prints its port
start_server() {
  local name=$1
  shift
  "$server" --listen 127.0.0.1:0 "$@" >"$work/$name.out" 2>"$work/$name.err" &
  local pid=$!
  pids+=("$pid")
  eval "pid_$name=$pid"
  for _ in $(seq 1 100); do
    grep -q '^listening on' "$work/$name.out" 2>/dev/null && break
    sleep 0.1
  done
  local addr
  addr=$(sed -n 's/^listening on //p' "$work/$name.out")
  if [ -z "$addr" ]; then
    echo "FAIL start $name: $(cat "$work/$name.err")"
    fail=$((fail + 1))
    return 1
  fi
  eval "url_$name=http://$addr"
}

# keys: the server's (Ed25519 public PEM) and a stranger's
openssl genpkey -algorithm ed25519 -out "$work/good.pem" 2>/dev/null
openssl genpkey -algorithm ed25519 -out "$work/other.pem" 2>/dev/null
openssl pkey -in "$work/good.pem" -pubout -out "$work/good.pub" 2>/dev/null

start_server open --db "$work/open.db" --stream-timeout 1500 --txn-timeout 1500 \
  --max-body 1048576 --max-rows 5000 --max-sql 150 --quiet
start_server auth --db "$work/auth.db" --auth-jwt-key-file "$work/good.pub" --quiet

# ---- 1. the libSQL clients ----
node_dir=$build/server-node
lock_sum=$(cat "$src/package.json" "$src/package-lock.json" | sha1sum | cut -c1-40)
if [ "$(cat "$node_dir/.lock-sum" 2>/dev/null)" != "$lock_sum" ]; then
  rm -rf "$node_dir"
  mkdir -p "$node_dir"
  cp "$src/package.json" "$src/package-lock.json" "$node_dir/"
  if (cd "$node_dir" && timeout 120 npm ci --no-audit --no-fund --loglevel=error >"$work/npm.log" 2>&1); then
    echo "$lock_sum" >"$node_dir/.lock-sum"
  else
    echo "SKIP the libSQL client tests: 'npm ci' could not install @libsql/client from the npm registry:"
    tail -5 "$work/npm.log"
  fi
fi
if [ -f "$node_dir/.lock-sum" ] && [ -n "${url_open:-}" ] && [ -n "${url_auth:-}" ]; then
  if ! command -v node >/dev/null 2>&1; then
    echo "SKIP the libSQL client tests: no node on PATH"
  else
    NODE_PATH=$node_dir/node_modules SHALE_URL_OPEN=$url_open SHALE_URL_AUTH=$url_auth \
      SHALE_KEY_GOOD=$work/good.pem SHALE_KEY_OTHER=$work/other.pem \
      timeout 120 node "$src/clients.js" >"$work/clients.log" 2>&1
    rc=$?
    tally <"$work/clients.log"
    if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$work/clients.log"; then
      echo "FAIL clients.js exited with $rc"
      fail=$((fail + 1))
    fi
  fi
fi

# ---- 2. hostile input ----
if [ -n "${url_open:-}" ]; then
  timeout 120 python3 "$src/robust.py" "$url_open" "$work/open.db" >"$work/robust.log" 2>&1
  rc=$?
  tally <"$work/robust.log"
  if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$work/robust.log"; then
    echo "FAIL robust.py exited with $rc"
    fail=$((fail + 1))
  fi
fi

# ---- 2b. Hrana 3 in Protobuf, compared with JSON ----
if [ -n "${url_open:-}" ]; then
  timeout 120 python3 "$src/proto.py" "$url_open" >"$work/proto.log" 2>&1
  rc=$?
  tally <"$work/proto.log"
  if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$work/proto.log"; then
    echo "FAIL proto.py exited with $rc"
    fail=$((fail + 1))
  fi
fi

# ---- tokens from `shale-server token` ----
if [ -n "${url_auth:-}" ]; then
  tok=$("$server" token --key "$work/good.pem" --ttl 60)
  rotok=$("$server" token --key "$work/good.pem" --ttl 60 --read-only)
  python3 - "$url_auth" "$tok" "$rotok" <<'PY'
import http.client, json, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
def run(tok, sql):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    body = json.dumps({"baton": None, "requests": [{"type": "execute", "stmt": {"sql": sql}}, {"type": "close"}]})
    c.request("POST", "/v2/pipeline", body, {"Authorization": "Bearer " + tok} if tok else {})
    r = c.getresponse()
    return r.status, json.loads(r.read())
st, r = run(sys.argv[2], "CREATE TABLE IF NOT EXISTS tok(x)")
print(("ok" if st == 200 and r["results"][0]["type"] == "ok" else "FAIL") + " shale-server token: a read-write token writes")
st, r = run(sys.argv[3], "INSERT INTO tok VALUES (1)")
print(("ok" if st == 200 and r["results"][0]["error"]["code"] == "SQLITE_READONLY" else "FAIL") + " shale-server token --read-only: writes refused")
st, r = run(None, "SELECT 1")
print(("ok" if st == 401 and r["code"] == "AUTH_FAILED" else "FAIL") + " no token: 401 with a JSON error")
PY
fi | tally

# ---- 3. clean stop, intact database ----
# the "stop" server is stopped by stop.py while connections of every kind are
# open on it (its stop path must free what they hold)
start_server stop --db "$work/stop.db" --quiet
if [ -n "${url_stop:-}" ]; then
  timeout 60 python3 "$src/stop.py" "$url_stop" "$pid_stop" 2>&1 | tally
fi
for name in open auth stop; do
  pid=$(eval "echo \${pid_$name:-}")
  [ -n "$pid" ] || continue
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "ok $name server stops cleanly"
    pass=$((pass + 1))
  else
    echo "FAIL $name server exit status $rc"
    tail -30 "$work/$name.err"
    fail=$((fail + 1))
  fi
  ic=$(sqlite3 "$work/$name.db" "PRAGMA integrity_check" 2>&1)
  if [ "$ic" = "ok" ]; then
    echo "ok $name database integrity_check"
    pass=$((pass + 1))
  else
    echo "FAIL $name database integrity_check: $ic"
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
