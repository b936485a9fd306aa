#!/usr/bin/env python3
"""stop.py URL PID -- stop a running build/shale-server (SIGTERM to PID) while
connections of every kind are still open, so that its stop path has to free
what they hold (under ASan, LeakSanitizer fails the exit status that
tests/server/run.sh checks):
  - HTTP keep-alive connections that were answered (kept request and
    response buffers, one of them grown by a large response), one with an
    HTTP stream inside a transaction (its baton never used again);
  - connections in the middle of a request: headers only, and a body cut
    short;
  - WebSocket sockets: one after hello with a stream in a transaction and a
    v3 cursor, one in the middle of a message, one that never said hello.
Prints "ok NAME" / "FAIL NAME: why" for what it checks before the stop."""
import http.client
import json
import os
import signal
import socket
import sys
import time
import urllib.parse

import wsutil

url = urllib.parse.urlparse(sys.argv[1])
HOST, PORT, PID = url.hostname, url.port, int(sys.argv[2])


def execute(sql):
    return {"type": "execute", "stmt": {"sql": sql}}


ws_frame = wsutil.ws_frame


def ws_connect(proto):
    return wsutil.ws_connect(HOST, PORT, proto)


def ws_recv_json(s, rest):
    op, payload, rest = wsutil.ws_recv(s, rest)
    assert op == 1, (op, payload[:100])
    return json.loads(payload), rest


def ws_req(s, rest, rid, req):
    s.sendall(ws_frame(json.dumps({"type": "request", "request_id": rid, "request": req}).encode()))
    m, rest = ws_recv_json(s, rest)
    assert m["type"] == "response_ok", m
    return rest


held = []
checks = []
try:
    # answered keep-alive connections, one with a large response, one with a
    # stream inside a transaction
    big = http.client.HTTPConnection(HOST, PORT, timeout=10)
    body = json.dumps({"baton": None, "requests": [
        execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 3000) "
                "SELECT i, printf('%0100d', i) FROM c"), {"type": "close"}]})
    big.request("POST", "/v2/pipeline", body)
    r = big.getresponse()
    raw = r.read()
    assert r.status == 200 and len(raw) > 300000, (r.status, len(raw))
    held.append(big)
    tx = http.client.HTTPConnection(HOST, PORT, timeout=10)
    tx.request("POST", "/v2/pipeline", json.dumps({"baton": None, "requests": [
        execute("CREATE TABLE IF NOT EXISTS stop_t(x)"), execute("BEGIN"),
        execute("INSERT INTO stop_t VALUES (1)")]}))
    r = tx.getresponse()
    res = json.loads(r.read())
    assert r.status == 200 and res["baton"], res
    held.append(tx)
    small = http.client.HTTPConnection(HOST, PORT, timeout=10)
    small.request("GET", "/health")
    r = small.getresponse()
    r.read()
    held.append(small)
    checks.append("HTTP keep-alive connections answered and kept open")
    # in the middle of a request
    a = socket.create_connection((HOST, PORT), timeout=10)
    a.sendall(b"POST /v2/pipeline HTTP/1.1\r\nHost: x\r\nContent-Le")
    b = socket.create_connection((HOST, PORT), timeout=10)
    b.sendall(b"POST /v2/pipeline HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
              + b'{"baton":null,"requests":[' + b" " * 20000)
    held += [a, b]
    # WebSocket: a stream in a transaction, a cursor, a queued message
    w, rest = ws_connect("hrana3")
    w.sendall(ws_frame(b'{"type":"hello","jwt":null}'))
    m, rest = ws_recv_json(w, rest)
    assert m["type"] == "hello_ok", m
    rest = ws_req(w, rest, 1, {"type": "open_stream", "stream_id": 1})
    rest = ws_req(w, rest, 2, {"type": "execute", "stream_id": 1, "stmt": {"sql": "BEGIN"}})
    rest = ws_req(w, rest, 3, {"type": "store_sql", "sql_id": 7, "sql": "SELECT 1"})
    rest = ws_req(w, rest, 4, {"type": "open_cursor", "stream_id": 1, "cursor_id": 1, "batch": {
        "steps": [{"stmt": {"sql": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c "
                                   "WHERE i < 100) SELECT i FROM c"}}]}})
    w.sendall(ws_frame(b'{"type":"request","request_id":5,', fin=False))  # half a message
    held.append(w)
    w2, rest2 = ws_connect("hrana2")  # no hello
    held.append(w2)
    checks.append("WebSocket sockets with a transaction, a cursor and half a message open")
    for c in checks:
        print("ok " + c, flush=True)
except Exception as e:  # noqa: BLE001
    print("FAIL stop.py set-up: %r" % (e,), flush=True)
time.sleep(0.3)  # let the server read what was sent
os.kill(PID, signal.SIGTERM)


def stopped():
    try:
        with open("/proc/%d/stat" % PID) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


# the connections stay open until the server has exited
deadline = time.time() + 30
while not stopped() and time.time() < deadline:
    time.sleep(0.05)
for h in held:
    try:
        h.close()
    except Exception:  # noqa: BLE001
        pass
