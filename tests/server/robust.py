#!/usr/bin/env python3
"""robust.py URL DBFILE -- hostile and malformed input against a running
build/shale-server (started by tests/server/run.sh with --max-body 1048576
--max-rows 5000 --max-sql 150): every case must get the spec's error (HTTP
status + {message, code} JSON) or a closed socket, and the server must keep
answering. Also the v3 HTTP cursor and pipeline, which @libsql/client does
not use. Prints "ok NAME" / "FAIL NAME: why"."""
import base64
import http.client
import json
import os
import socket
import struct
import sys
import time
import urllib.parse

import wsutil

url = urllib.parse.urlparse(sys.argv[1])
HOST, PORT = url.hostname, url.port
failures = 0


def ok(name):
    print("ok " + name, flush=True)


def fail(name, why):
    global failures
    failures += 1
    print("FAIL %s: %s" % (name, why), flush=True)


def case(fn):
    try:
        fn()
        ok(fn.__doc__)
    except Exception as e:  # noqa: BLE001 - report every failure and go on
        fail(fn.__doc__, repr(e))
    return fn


def post(path, body, headers=None):
    c = http.client.HTTPConnection(HOST, PORT, timeout=10)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    c.request("POST", path, data, headers or {"Content-Type": "application/json"})
    r = c.getresponse()
    raw = r.read()
    ctype = r.getheader("Content-Type")
    c.close()
    return r.status, ctype, raw


def pipeline(reqs, baton=None, version=2):
    st, ct, raw = post("/v%d/pipeline" % version, {"baton": baton, "requests": reqs})
    return st, ct, json.loads(raw)


def expect_error(status, ctype, raw, want_status, want_code=None):
    assert status == want_status, "status %d, want %d: %r" % (status, want_status, raw[:200])
    assert ctype == "application/json", "content type %r" % ctype
    e = json.loads(raw)
    assert isinstance(e.get("message"), str), e
    if want_code:
        assert e.get("code") == want_code, "code %r, want %r" % (e.get("code"), want_code)


def execute(sql, args=None, named=None, want_rows=True):
    stmt = {"sql": sql, "want_rows": want_rows}
    if args is not None:
        stmt["args"] = args
    if named is not None:
        stmt["named_args"] = named
    return {"type": "execute", "stmt": stmt}


def alive():
    c = http.client.HTTPConnection(HOST, PORT, timeout=10)
    c.request("GET", "/health")
    r = c.getresponse()
    r.read()
    c.close()
    assert r.status == 200


@case
def routes():
    """routes: GET /v2 /v3 /health /version, 404s as JSON"""
    for p in ("/v2", "/v3", "/health", "/version"):
        c = http.client.HTTPConnection(HOST, PORT, timeout=10)
        c.request("GET", p)
        r = c.getresponse()
        r.read()
        assert r.status == 200, (p, r.status)
    expect_error(*post("/v9/pipeline", {}), 404)
    c = http.client.HTTPConnection(HOST, PORT, timeout=10)
    c.request("GET", "/nope")
    r = c.getresponse()
    raw = r.read()
    expect_error(r.status, r.getheader("Content-Type"), raw, 404)


@case
def malformed_json():
    """malformed JSON bodies get 400 HTTP_BODY_INVALID"""
    for body in (b"{", b"", b"[]", b"null", b"{\"requests\": 5}", b"\xff\xfe", b"{\"baton\": 7, \"requests\": []}",
                 b"{\"requests\": []} trailing"):
        expect_error(*post("/v2/pipeline", body), 400, "HTTP_BODY_INVALID")
    alive()


@case
def wrong_types():
    """wrong types inside requests are per-request errors"""
    reqs = [
        {"type": "execute"},
        {"type": "execute", "stmt": {"sql": 5}},
        {"type": "execute", "stmt": "SELECT 1"},
        {"type": "bogus"},
        {"nope": 1},
        execute("SELECT ?", [{"type": "integer", "value": "12abc"}]),
        execute("SELECT ?", [{"type": "integer", "value": "99999999999999999999"}]),
        execute("SELECT ?", [{"type": "blob", "base64": "!!!"}]),
        execute("SELECT ?", [{"type": "float", "value": "1.5"}]),
        execute("SELECT ?", [{"type": "wat"}]),
        execute("SELECT ?", [5]),
        execute("SELECT ?", [{"type": "null"}, {"type": "null"}]),
        execute("SELECT 1; SELECT 2"),
        execute("   -- only a comment"),
        {"type": "batch", "batch": {"steps": [{"stmt": {"sql": "SELECT 1"}, "condition": {"type": "ok", "step": 5}}]}},
        {"type": "batch", "batch": {"steps": 3}},
        {"type": "sequence"},
        {"type": "describe", "sql_id": 999},
        {"type": "get_autocommit"},  # v3 only
    ]
    want = ["PROTO_INVALID", "PROTO_INVALID", "PROTO_INVALID", "REQUEST_UNKNOWN", "REQUEST_INVALID",
            "ARGS_INVALID", "ARGS_INVALID", "ARGS_INVALID", "ARGS_INVALID", "ARGS_INVALID", "ARGS_INVALID",
            "ARGS_INVALID", "SQL_MANY_STATEMENTS", "SQL_NO_STATEMENT", "BATCH_COND_INVALID", "PROTO_INVALID",
            "PROTO_INVALID", "SQL_ID_INVALID", "REQUEST_UNKNOWN"]
    st, ct, r = pipeline(reqs + [{"type": "close"}])
    assert st == 200, st
    res = r["results"]
    assert len(res) == len(reqs) + 1
    for i, w in enumerate(want):
        assert res[i]["type"] == "error", (i, res[i])
        assert res[i]["error"]["code"] == w, (i, res[i]["error"], w)
    assert r["baton"] is None


@case
def values_exact():
    """values: integers as strings, floats as numbers, blobs padded/unpadded, rowid a string"""
    st, ct, r = pipeline([
        execute("CREATE TABLE IF NOT EXISTS rv(id INTEGER PRIMARY KEY, v)"),
        execute("INSERT INTO rv(v) VALUES (?), (?)", [{"type": "blob", "base64": "AQID"}, {"type": "blob", "base64": "AQ"}]),
        execute("SELECT ?, ?, ?, ?, ?", [{"type": "integer", "value": "-9223372036854775808"}, {"type": "float", "value": 1},
                                         {"type": "text", "value": "a\u0000b"}, {"type": "blob", "base64": "AQ=="},
                                         {"type": "blob", "base64": "-_8"}]),
        {"type": "close"}])
    res = r["results"]
    ins = res[1]["response"]["result"]
    assert ins["affected_row_count"] == 2, ins
    assert isinstance(ins["last_insert_rowid"], str), ins
    row = res[2]["response"]["result"]["rows"][0]
    assert row[0] == {"type": "integer", "value": "-9223372036854775808"}, row[0]
    assert row[1] == {"type": "float", "value": 1.0} and isinstance(row[1]["value"], float), row[1]
    assert row[2] == {"type": "text", "value": "a\u0000b"}, row[2]
    assert base64.b64decode(row[3]["base64"]) == b"\x01", row[3]
    assert base64.b64decode(row[4]["base64"]) == b"\xfb\xff", row[4]


@case
def values_encoded():
    """responses are valid JSON for every value: escapes, UTF-8 (invalid bytes as U+FFFD), floats, integers, blobs, names"""
    text = "q\"b\\s/\n\r\t\b\f\x01\x1f\x7f \u00e9\u20ac\U0001f600 end"
    floats = [0.0, -0.0, 1.0, -2.5, 0.1, 1e300, -1e-300, 2.0 ** 53, 123456789.125, 5e-324]
    ints = ["0", "-1", "9223372036854775807", "-9223372036854775808", "1000000"]
    args = [{"type": "text", "value": text}] + [{"type": "float", "value": f} for f in floats] + \
           [{"type": "integer", "value": v} for v in ints] + \
           [{"type": "blob", "base64": b} for b in ("", "AA==", "AAE=", "AAEC", base64.b64encode(bytes(range(256))).decode())] + \
           [{"type": "null"}]
    sql = "SELECT " + ", ".join("?%d AS \"c\"\"%d\"" % (i + 1, i) for i in range(len(args))) + \
          ", CAST(X'61FF62C0AFED' AS TEXT) AS bad, CAST(X'F09F98' AS TEXT), 1e999, -1e999"
    st, ct, raw = post("/v2/pipeline", {"baton": None, "requests": [execute(sql, args), {"type": "close"}]})
    assert st == 200, raw[:300]
    r = json.loads(raw.decode("utf-8"))  # strict: the text must be valid UTF-8 JSON
    res = r["results"][0]["response"]["result"]
    row = res["rows"][0]
    assert row[0] == {"type": "text", "value": text}, row[0]
    for k, f in enumerate(floats):
        v = row[1 + k]
        assert v["type"] == "float" and v["value"] == f and isinstance(v["value"], float), (f, v)
        assert (str(v["value"])[0] == "-") == (str(f)[0] == "-"), (f, v)
    for k, i in enumerate(ints):
        assert row[1 + len(floats) + k] == {"type": "integer", "value": i}, row[1 + len(floats) + k]
    blobs = row[1 + len(floats) + len(ints):1 + len(floats) + len(ints) + 5]
    assert [base64.b64decode(b["base64"]) for b in blobs] == [b"", b"\0", b"\0\1", b"\0\1\2", bytes(range(256))], blobs
    rest = row[len(args):]
    assert row[len(args) - 1] == {"type": "null"}, row[len(args) - 1]
    assert rest[0] == {"type": "text", "value": "a\ufffdb\ufffd\ufffd\ufffd"}, rest[0]
    assert rest[1]["type"] == "text" and set(rest[1]["value"]) == {"\ufffd"}, rest[1]
    assert rest[2] == {"type": "float", "value": 1.7976931348623157e308}, rest[2]
    assert rest[3] == {"type": "float", "value": -1.7976931348623157e308}, rest[3]
    names = [c["name"] for c in res["cols"]]
    assert names[:3] == ['c"0', 'c"1', 'c"2'], names[:3]
    assert len(res["cols"]) == len(row), res["cols"]



@case
def huge_body():
    """a body over --max-body gets 413 and the server goes on"""
    body = b'{"baton":null,"requests":[' + b" " * (1 << 21) + b"]}"
    expect_error(*post("/v2/pipeline", body), 413, "HTTP_BODY_TOO_LARGE")
    alive()


@case
def forged_batons():
    """forged, replayed and stale batons are refused"""
    st, ct, r = pipeline([execute("SELECT 1")])
    b1 = r["baton"]
    assert isinstance(b1, str)
    st, ct, r2 = pipeline([execute("SELECT 2")], b1)
    assert st == 200 and r2["baton"], r2
    b2 = r2["baton"]
    expect_error(*post("/v2/pipeline", {"baton": b1, "requests": []}), 400, "STREAM_EXPIRED")  # replay
    slot, gen, tok = b2.split(".")
    forged = "%s.%s.%s" % (slot, gen, ("0" if tok[0] != "0" else "1") + tok[1:])
    expect_error(*post("/v2/pipeline", {"baton": forged, "requests": []}), 400, "STREAM_EXPIRED")
    for junk in ("", "x", "1.2", "99999999.1." + "a" * 32, "0.0." + "g" * 32, "0.1." + "a" * 40, "-1.1." + "a" * 32):
        st, ct, raw = post("/v2/pipeline", {"baton": junk, "requests": []})
        expect_error(st, ct, raw, 400)
    # malformed: a bad digit at every position of the secret (high and low
    # nibble), odd characters, too short or long, bad numbers
    slot, gen, tok = b2.split(".")
    junk = []
    for i in range(32):
        for c in "gG/:@`{ \u00e9\x00-":
            junk.append("%s.%s.%s" % (slot, gen, tok[:i] + c + tok[i + 1:]))
    junk += ["%s.%s.%s" % (slot, gen, t) for t in (tok[:-1], tok + "0", tok[:-2], tok + "00", tok.upper(), "", "0x" + tok[2:])]
    junk += ["%s.%s.%s" % (s_, g_, tok) for s_, g_ in (("", gen), (slot, ""), (" " + slot, gen), ("+" + slot, gen),
             (slot, "-" + gen), ("4294967296", gen), (slot, "4294967296"), ("9" * 40, gen), (slot, "9" * 40),
             ("0x" + slot, gen), (slot + "a", gen))]
    junk += [b2 + ".", "." + b2, b2.replace(".", ",", 1), "%s.%s" % (slot, tok), "..", "...", "." * 40, "\x00" + b2]
    for j in junk:
        st, ct, raw = post("/v2/pipeline", {"baton": j, "requests": []})
        expect_error(st, ct, raw, 400)
    # the forgeries did not kill the real stream
    st, ct, r3 = pipeline([{"type": "close"}], b2)
    assert st == 200 and r3["baton"] is None, r3


@case
def statement_cache_and_schema_changes():
    """a repeated statement (served from the connection's statement cache) sees schema changes made
    by another stream, keeps its read-only check, and rebinds its arguments every time"""
    st, ct, r = pipeline([execute("DROP TABLE IF EXISTS sc"), execute("CREATE TABLE sc(x)"),
                          execute("INSERT INTO sc VALUES (1)")])
    assert all(x["type"] == "ok" for x in r["results"]), r
    a = r["baton"]
    q = execute("SELECT * FROM sc")
    for _ in range(3):
        st, ct, r = pipeline([q], a)
        assert r["results"][0]["response"]["result"]["cols"][0]["name"] == "x", r
        a = r["baton"]
    st, ct, r = pipeline([execute("ALTER TABLE sc ADD COLUMN y DEFAULT 7"), {"type": "close"}])
    assert r["results"][0]["type"] == "ok", r
    st, ct, r = pipeline([q], a)
    res = r["results"][0]["response"]["result"]
    assert [c["name"] for c in res["cols"]] == ["x", "y"] and res["rows"][0][1]["value"] == "7", res
    a = r["baton"]
    # arguments: a run without them binds NULL, not the previous run's value
    p = execute("SELECT ?1 IS NULL", [{"type": "integer", "value": "5"}])
    st, ct, r = pipeline([p, execute("SELECT ?1 IS NULL")], a)
    rows = [x["response"]["result"]["rows"][0][0]["value"] for x in r["results"]]
    assert rows == ["0", "1"], r
    a = r["baton"]
    st, ct, r = pipeline([execute("DROP TABLE sc"), {"type": "close"}])
    assert r["results"][0]["type"] == "ok", r
    st, ct, r = pipeline([q, {"type": "close"}], a)
    e = r["results"][0]
    assert e["type"] == "error" and "no such table" in e["error"]["message"], e


@case
def stream_state():
    """a transaction spans pipelines; store_sql/close_sql per stream; stale stream expires"""
    st, ct, r = pipeline([execute("CREATE TABLE IF NOT EXISTS ss(x)"), execute("BEGIN"),
                          execute("INSERT INTO ss VALUES (1)"),
                          {"type": "store_sql", "sql_id": 1, "sql": "SELECT count(*) FROM ss"}])
    assert all(x["type"] == "ok" for x in r["results"]), r
    st, ct, r = pipeline([{"type": "execute", "stmt": {"sql_id": 1}}, {"type": "close_sql", "sql_id": 1},
                          {"type": "execute", "stmt": {"sql_id": 1}}, execute("ROLLBACK")], r["baton"])
    res = r["results"]
    assert res[0]["response"]["result"]["rows"][0][0]["value"] == "1", res[0]
    assert res[2]["type"] == "error" and res[2]["error"]["code"] == "SQL_ID_INVALID", res[2]
    reqs = [{"type": "store_sql", "sql_id": i, "sql": "SELECT 1"} for i in range(151)]
    st, ct, r = pipeline(reqs, r["baton"])
    assert r["results"][149]["type"] == "ok" and r["results"][150]["error"]["code"] == "SQL_STORE_TOO_MANY", r["results"][150]
    baton = r["baton"]
    time.sleep(2.2)  # --stream-timeout 1500
    expect_error(*post("/v2/pipeline", {"baton": baton, "requests": []}), 400, "STREAM_EXPIRED")


@case
def rows_limit():
    """a result over --max-rows is a RESPONSE_TOO_LARGE error"""
    st, ct, r = pipeline([execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 6000) SELECT i FROM c"),
                          execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 6000) SELECT i FROM c", want_rows=False),
                          {"type": "close"}])
    assert r["results"][0]["error"]["code"] == "RESPONSE_TOO_LARGE", r["results"][0]
    assert r["results"][1]["type"] == "ok", r["results"][1]


@case
def v3_http():
    """v3 over HTTP: get_autocommit, describe, cursor with conditions"""
    st, ct, r = pipeline([{"type": "get_autocommit"}, {"type": "describe", "sql": "SELECT ?1, :x"}], None, 3)
    assert r["results"][0]["response"]["is_autocommit"] is True, r
    d = r["results"][1]["response"]["result"]
    assert [p["name"] for p in d["params"]] == ["?1", ":x"] and d["is_readonly"] is True, d
    batch = {"steps": [
        {"stmt": {"sql": "SELECT 1 AS a UNION ALL SELECT 2"}},
        {"stmt": {"sql": "SELECT * FROM nowhere"}},
        {"stmt": {"sql": "SELECT 'e'"}, "condition": {"type": "error", "step": 1}},
        {"stmt": {"sql": "SELECT 'skipped'"}, "condition": {"type": "and", "conds": [{"type": "ok", "step": 0}, {"type": "ok", "step": 1}]}},
        {"stmt": {"sql": "SELECT 'or'"}, "condition": {"type": "or", "conds": [{"type": "not", "cond": {"type": "is_autocommit"}}, {"type": "ok", "step": 0}]}},
    ]}
    st, ct, raw = post("/v3/cursor", {"baton": r["baton"], "batch": batch})
    assert st == 200, (st, raw)
    lines = [json.loads(x) for x in raw.decode().splitlines()]
    assert isinstance(lines[0]["baton"], str), lines[0]
    kinds = [(e["type"], e.get("step")) for e in lines[1:]]
    assert kinds == [("step_begin", 0), ("row", None), ("row", None), ("step_end", None), ("step_error", 1),
                     ("step_begin", 2), ("row", None), ("step_end", None), ("step_begin", 4), ("row", None),
                     ("step_end", None)], kinds
    assert lines[1]["cols"][0]["name"] == "a" and lines[2]["row"][0]["value"] == "1", lines[1:3]
    assert lines[5]["error"]["code"] == "SQLITE_ERROR", lines[5]
    st, ct, r = pipeline([{"type": "close"}], lines[0]["baton"], 3)
    assert r["baton"] is None


@case
def acknowledged_commits():
    """every acknowledged commit is present"""
    pipeline([execute("CREATE TABLE IF NOT EXISTS ack(n INTEGER PRIMARY KEY)"), {"type": "close"}])
    for i in range(200):
        st, ct, r = pipeline([execute("INSERT INTO ack VALUES (?)", [{"type": "integer", "value": str(i)}]), {"type": "close"}])
        assert r["results"][0]["type"] == "ok", r
    st, ct, r = pipeline([execute("SELECT count(*), sum(n) FROM ack"), {"type": "close"}])
    row = r["results"][0]["response"]["result"]["rows"][0]
    assert row[0]["value"] == "200" and row[1]["value"] == str(sum(range(200))), row


@case
def concurrent_streams():
    """WAL: a reader is not blocked by a writer; a second writer gets SQLITE_BUSY, then succeeds"""
    pipeline([execute("CREATE TABLE IF NOT EXISTS cc(x)"), execute("INSERT INTO cc VALUES (1)"), {"type": "close"}])
    st, ct, a = pipeline([execute("BEGIN IMMEDIATE"), execute("INSERT INTO cc VALUES (2)")])
    assert all(x["type"] == "ok" for x in a["results"]), a
    st, ct, r = pipeline([execute("SELECT count(*) FROM cc"), execute("INSERT INTO cc VALUES (3)"), {"type": "close"}])
    assert r["results"][0]["response"]["result"]["rows"][0][0]["value"] == "1", r["results"][0]
    assert r["results"][1]["error"]["code"] == "SQLITE_BUSY", r["results"][1]
    st, ct, a = pipeline([execute("COMMIT"), {"type": "close"}], a["baton"])
    assert a["results"][0]["type"] == "ok", a
    st, ct, r = pipeline([execute("INSERT INTO cc VALUES (3)"), execute("SELECT count(*) FROM cc"), {"type": "close"}])
    assert r["results"][1]["response"]["result"]["rows"][0][0]["value"] == "3", r


# ---- WebSocket, by hand (wsutil.py): a handshake and frames ----
def ws_connect(proto="hrana2"):
    return wsutil.ws_connect(HOST, PORT, proto)


ws_frame, ws_recv = wsutil.ws_frame, wsutil.ws_recv


def ws_msg(s, rest, obj):
    s.sendall(ws_frame(json.dumps(obj).encode()))
    op, payload, rest = ws_recv(s, rest)
    return (json.loads(payload) if op == 1 else (op, payload)), rest


def expect_close(s, rest):
    op, payload, rest = ws_recv(s, rest)
    assert op in (None, 8), "expected a close, got opcode %r %r" % (op, payload[:100])


@case
def ws_protocol_errors():
    """WebSocket: binary, invalid JSON, request before hello, unknown type close the socket"""
    for frames in ([ws_frame(b"\x00\x01", opcode=2)], [ws_frame(b"{nope")],
                   [ws_frame(json.dumps({"type": "request", "request_id": 1, "request": {"type": "open_stream", "stream_id": 1}}).encode())],
                   [ws_frame(b'{"type":"hello","jwt":null}'), ws_frame(b'{"type":"what"}')]):
        s, rest = ws_connect()
        for f in frames:
            s.sendall(f)
        op = 1
        while op == 1:  # skip hello_ok
            op, payload, rest = ws_recv(s, rest)
        assert op in (None, 8), op
        s.close()
    alive()


@case
def ws_truncated_and_dropped():
    """WebSocket: truncated frames and a client dropped mid-transaction"""
    s, rest = ws_connect()
    s.sendall(ws_frame(b'{"type":"hello","jwt":null}')[:5])  # a truncated frame, then gone
    s.close()
    s, rest = ws_connect()
    big = ws_frame(b"x" * 100000)
    s.sendall(big[:5000])
    s.close()
    # mid-transaction: BEGIN + INSERT, then the socket vanishes
    s, rest = ws_connect("hrana3")
    m, rest = ws_msg(s, rest, {"type": "hello", "jwt": None})
    assert m["type"] == "hello_ok", m
    reqs = [{"type": "open_stream", "stream_id": 7},
            {"type": "execute", "stream_id": 7, "stmt": {"sql": "CREATE TABLE IF NOT EXISTS dropped(x)"}},
            {"type": "execute", "stream_id": 7, "stmt": {"sql": "BEGIN IMMEDIATE"}},
            {"type": "execute", "stream_id": 7, "stmt": {"sql": "INSERT INTO dropped VALUES (1)"}},
            {"type": "get_autocommit", "stream_id": 7}]
    for i, rq in enumerate(reqs):
        m, rest = ws_msg(s, rest, {"type": "request", "request_id": i, "request": rq})
        assert m["type"] == "response_ok" and m["request_id"] == i, m
    assert m["response"]["is_autocommit"] is False, m
    s.close()
    time.sleep(0.3)
    # the write lock is free again and the insert is gone
    st, ct, r = pipeline([execute("INSERT INTO dropped VALUES (2)"), execute("SELECT x FROM dropped"), {"type": "close"}])
    assert r["results"][0]["type"] == "ok", r["results"][0]
    assert [x[0]["value"] for x in r["results"][1]["response"]["result"]["rows"]] == ["2"], r["results"][1]


@case
def ws_streams_and_limits():
    """WebSocket: many streams, unknown stream, pipelined requests, cursor fetch"""
    s, rest = ws_connect("hrana3")
    m, rest = ws_msg(s, rest, {"type": "hello", "jwt": None})
    out = b""
    n = 200
    for i in range(n):  # pipelined: more than --max-inflight queued at once
        out += ws_frame(json.dumps({"type": "request", "request_id": i, "request":
                                    {"type": "open_stream", "stream_id": i} if i < 20 else
                                    {"type": "execute", "stream_id": i % 20, "stmt": {"sql": "SELECT %d" % i}}}).encode())
    s.sendall(out)
    got = []
    while len(got) < n:
        op, payload, rest = ws_recv(s, rest)
        assert op == 1, op
        got.append(json.loads(payload))
    assert [g["request_id"] for g in got] == list(range(n)), "responses out of order"
    assert all(g["type"] == "response_ok" for g in got), [g for g in got if g["type"] != "response_ok"][:1]
    m, rest = ws_msg(s, rest, {"type": "request", "request_id": 1000, "request": {"type": "execute", "stream_id": 999, "stmt": {"sql": "SELECT 1"}}})
    assert m["type"] == "response_error", m
    m, rest = ws_msg(s, rest, {"type": "request", "request_id": 1001, "request": {"type": "open_cursor", "stream_id": 0, "cursor_id": 1,
                                "batch": {"steps": [{"stmt": {"sql": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 10) SELECT i FROM c"}}]}}})
    assert m["type"] == "response_ok", m
    entries = []
    for k in range(10):
        m, rest = ws_msg(s, rest, {"type": "request", "request_id": 1002 + k, "request": {"type": "fetch_cursor", "cursor_id": 1, "max_count": 4}})
        entries += m["response"]["entries"]
        if m["response"]["done"]:
            break
    assert [e["type"] for e in entries] == ["step_begin"] + ["row"] * 10 + ["step_end"], entries
    s.close()


@case
def many_idle_connections():
    """hundreds of idle connections; the server still answers"""
    socks = []
    try:
        for _ in range(400):
            socks.append(socket.create_connection((HOST, PORT), timeout=10))
        half = [socket.create_connection((HOST, PORT), timeout=10) for _ in range(50)]
        for h in half:  # half a request line each
            h.sendall(b"POST /v2/pipeline HTTP/1.1\r\nContent-Le")
        socks += half
        alive()
        st, ct, r = pipeline([execute("SELECT 1"), {"type": "close"}])
        assert st == 200
    finally:
        for s in socks:
            s.close()
    alive()


def main():
    alive()
    print("robust.py: %d failed" % failures, file=sys.stderr)
    sys.exit(1 if failures else 0)


main()
