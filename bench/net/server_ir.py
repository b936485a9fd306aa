#!/usr/bin/env python3
"""server_ir.py [--server BIN] [--n N] [--proto] [--annotate FILE] [--strace]
Instructions the server spends per request, counted by callgrind (the
machine's load does not change them): build/shale-server runs under
callgrind on a scratch database of 10,000 rows t(id INTEGER PRIMARY KEY,
k INTEGER, v TEXT, r REAL); a client sends point lookups the way
bench/net/engine_net.c does (POST /v2/pipeline, one execute with an integer
argument, the baton carried to the next request, one keep-alive
connection). After a warm-up the counters are zeroed (callgrind_control
-z), N lookups run, and the counters are dumped: Ir / N is the server's cost
per request, the client's not included. Also an insert shape (one INSERT of
three arguments per request, autocommit). --proto sends the same requests in
Hrana 3's Protobuf (POST /v3-protobuf/pipeline, encoded here by hand: the
few fields used). --annotate FILE keeps the dump's callgrind_annotate listing
of the lookups. --strace counts the server's system calls per request instead
(no callgrind: strace -c -f attached for the N requests only)."""
import signal
import argparse
import atexit
import glob
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "server"))
from pbwire import fb, fd, fv, parse, zigzag  # noqa: E402 (the wire format by hand)

ap = argparse.ArgumentParser()
ap.add_argument("--server", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                  "shale-server"))
ap.add_argument("--n", type=int, default=2000)
ap.add_argument("--proto", action="store_true", help="POST /v3-protobuf/pipeline")
ap.add_argument("--annotate")
ap.add_argument("--strace", action="store_true", help="system calls per request (strace -c)")
args = ap.parse_args()

work = tempfile.mkdtemp(prefix="server-ir.")
out = os.path.join(work, "cg.out")
tool = [] if args.strace else ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p"]
proc = subprocess.Popen(tool + [args.server, "--db", os.path.join(work, "t.db"), "--listen", "127.0.0.1:0", "--quiet"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
atexit.register(lambda: proc.poll() is None and proc.kill())  # a failed run leaves no server
line = proc.stdout.readline()
m = re.match(r"listening on ([\d.]+):(\d+)", line)
if not m:
    sys.exit("server did not start: %r" % line)
conn = http.client.HTTPConnection(m.group(1), int(m.group(2)), timeout=600)
baton = None


def pb_value(v):  # Value: integer (sint64) 2, float 3, text 4
    if isinstance(v, int):
        return fv(2, zigzag(v))
    if isinstance(v, float):
        return fd(3, v)
    return fb(4, v)


def pb_request(r):  # StreamRequest with execute (2) or sequence (4)
    if r["type"] == "sequence":
        return fb(4, fb(1, r["sql"]))
    st = r["stmt"]
    return fb(2, fb(1, fb(1, st["sql"]) + b"".join(fb(3, pb_value(v)) for v in st["vals"]) + fv(5, 1)))


def pipeline_pb(reqs):
    global baton
    body = (fb(1, baton) if baton else b"") + b"".join(fb(2, pb_request(r)) for r in reqs)
    conn.request("POST", "/v3-protobuf/pipeline", body, {"Content-Type": "application/x-protobuf"})
    r = conn.getresponse()
    data = r.read()
    assert r.status == 200, data
    out = parse(data)
    baton = out[1][-1].decode() if 1 in out else None
    for res in out.get(3, []):
        assert 1 in parse(res), res  # StreamResult.ok
    return out


def pipeline(reqs):
    global baton
    if args.proto:
        return pipeline_pb(reqs)
    reqs = [dict(r, stmt={k: v for k, v in r["stmt"].items() if k != "vals"}) if "stmt" in r else r for r in reqs]
    conn.request("POST", "/v2/pipeline", json.dumps({"baton": baton, "requests": reqs}),
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    body = json.loads(r.read())
    assert r.status == 200, body
    for res in body["results"]:
        assert res["type"] == "ok", res
    baton = body["baton"]
    return body


def execute(sql, *vals):
    enc = [{"type": "integer", "value": str(v)} if isinstance(v, int) else
           {"type": "float", "value": v} if isinstance(v, float) else {"type": "text", "value": v} for v in vals]
    return {"type": "execute", "stmt": {"sql": sql, "args": enc, "want_rows": True, "vals": vals}}


pipeline([{"type": "sequence", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT, r REAL);"
           "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 10000) "
           "INSERT INTO t SELECT i, (i * 7919) % 1000000, printf('v%011d', i * 31), i / 7.0 FROM c;"
           "CREATE TABLE ins(id INTEGER PRIMARY KEY, k INTEGER, v TEXT, r REAL)"}])
seed = 1


def rnd():
    global seed
    seed = (seed * 1103515245 + 12345) % (1 << 31)
    return seed


def lookups(n):
    for _ in range(n):
        pipeline([execute("SELECT k, v, r FROM t WHERE id = ?1", rnd() % 10000 + 1)])


def inserts(n):
    for _ in range(n):
        pipeline([execute("INSERT INTO ins(k, v, r) VALUES(?1, ?2, ?3)", rnd() % 1000000, "t%011d" % rnd(),
                          rnd() / 3.0)])


def measure(fn, n):
    fn(50)  # warm-up: statement cache, page cache
    subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    fn(n)
    before = set(glob.glob(out + ".*"))
    subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    dumps = sorted(set(glob.glob(out + ".*")) - before, key=os.path.getmtime)
    ir = None
    with open(dumps[-1]) as f:
        for ln in f:
            if ln.startswith("summary:") or ln.startswith("totals:"):
                ir = int(ln.split()[1])
    return ir / n, dumps[-1]


def measure_strace(fn, n):
    """{syscall: calls per request} over n requests."""
    fn(50)
    st_out = os.path.join(work, "strace.%d" % n)
    st = subprocess.Popen(["strace", "-c", "-f", "-p", str(proc.pid), "-o", st_out],
                          stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached
    fn(n)
    st.send_signal(signal.SIGINT)
    st.wait()
    calls = {}
    with open(st_out) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 5 and p[0][0].isdigit() and p[-1] != "total":
                calls[p[-1]] = int(p[3]) / n
    return calls


if args.strace:
    for name, fn in (("point lookup", lookups), ("insert", inserts)):
        calls = measure_strace(fn, args.n)
        print("server system calls per request (%s), %s: %s (%.2f in all; n=%d)" %
              ("Protobuf" if args.proto else "JSON", name,
               ", ".join("%s %.2f" % kv for kv in sorted(calls.items(), key=lambda kv: -kv[1])),
               sum(calls.values()), args.n))
    conn.close()
    proc.terminate()
    proc.wait()
    sys.exit(0)

look, look_dump = measure(lookups, args.n)
ins, _ = measure(inserts, args.n // 2)
print("server Ir per request (%s): point lookup %.1fk, insert %.1fk (n=%d)" %
      ("Protobuf" if args.proto else "JSON", look / 1000, ins / 1000, args.n))
if args.annotate:
    with open(args.annotate, "w") as f:
        subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", look_dump], stdout=f, check=True)
    with open(args.annotate + ".incl", "w") as f:
        subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", look_dump], stdout=f, check=True)
conn.close()
proc.terminate()
proc.wait()
