#!/usr/bin/env python3
"""proto.py URL -- Hrana 3 in Protobuf against a running build/shale-server:
POST /v3-protobuf/pipeline and /v3-protobuf/cursor, and the WebSocket
subprotocol hrana3-protobuf. Every request goes once in JSON and once in
Protobuf (the same statements on a table made afresh each time), and the two
answers, decoded into one form, must be equal: execute with every value type
and named arguments, batches with every condition, sequence, describe,
store_sql/close_sql, get_autocommit, cursors, errors with their codes. Then
malformed Protobuf. The Protobuf codec here is the test's own (the wire format
by hand, for the few messages used: Debian has no Python protobuf package by
default), so it checks the server's protoc-c code against the spec's schema,
not against itself. Prints "ok NAME" / "FAIL NAME: why"."""
import base64
import http.client
import json
import struct
import sys
import urllib.parse

import wsutil
from pbwire import fb, fd, fv, parse, read_varint, unzigzag, zigzag

url = urllib.parse.urlparse(sys.argv[1])
HOST, PORT = url.hostname, url.port
failures = 0


def case(fn):
    global failures
    try:
        fn()
        print("ok " + fn.__doc__, flush=True)
    except Exception as e:  # noqa: BLE001 - report every failure and go on
        failures += 1
        print("FAIL %s: %r" % (fn.__doc__, e), flush=True)
    return fn


def one(f, num, default=None):
    return f[num][-1] if num in f else default


def sint32(n):  # an int32 varint read back
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >> 63 else n


# ---- JSON requests -> Protobuf (the spec's schema) ----

def p_value(v):
    t = v["type"]
    if t == "null":
        return fb(1, b"")
    if t == "integer":
        return fv(2, zigzag(int(v["value"])))
    if t == "float":
        return fd(3, v["value"])
    if t == "text":
        return fb(4, v["value"])
    return fb(5, base64.b64decode(v["base64"]))


def p_stmt(s):
    out = b""
    if "sql" in s:
        out += fb(1, s["sql"])
    if "sql_id" in s:
        out += fv(2, s["sql_id"])
    for a in s.get("args", []):
        out += fb(3, p_value(a))
    for a in s.get("named_args", []):
        out += fb(4, fb(1, a["name"]) + fb(2, p_value(a["value"])))
    if "want_rows" in s:
        out += fv(5, int(s["want_rows"]))
    return out


def p_cond(c):
    t = c["type"]
    if t in ("ok", "error"):
        return fv(1 if t == "ok" else 2, c["step"])
    if t == "not":
        return fb(3, p_cond(c["cond"]))
    if t in ("and", "or"):
        return fb(4 if t == "and" else 5, b"".join(fb(1, p_cond(x)) for x in c["conds"]))
    return fb(6, b"")


def p_batch(b):
    out = b""
    for st in b["steps"]:
        s = fb(2, p_stmt(st["stmt"]))
        if st.get("condition"):
            s = fb(1, p_cond(st["condition"])) + s
        out += fb(1, s)
    return out


def p_ints(r, names):  # proto3: an int that is 0 is not sent
    return b"".join(fv(i, r[n]) for i, n in names if r.get(n))


def p_sql(r, first):
    out = b""
    if "sql" in r:
        out += fb(first, r["sql"])
    if "sql_id" in r:
        out += fv(first + 1, r["sql_id"])
    return out


HTTP_REQ = {"close": 1, "execute": 2, "batch": 3, "sequence": 4, "describe": 5, "store_sql": 6,
            "close_sql": 7, "get_autocommit": 8}


def p_http_request(r):
    t = r["type"]
    if t == "execute":
        body = fb(1, p_stmt(r["stmt"]))
    elif t == "batch":
        body = fb(1, p_batch(r["batch"]))
    elif t in ("sequence", "describe"):
        body = p_sql(r, 1)
    elif t == "store_sql":
        body = p_ints(r, [(1, "sql_id")]) + fb(2, r["sql"])
    elif t == "close_sql":
        body = p_ints(r, [(1, "sql_id")])
    else:
        body = b""
    return fb(HTTP_REQ[t], body)


WS_REQ = {"open_stream": 2, "close_stream": 3, "execute": 4, "batch": 5, "open_cursor": 6,
          "close_cursor": 7, "fetch_cursor": 8, "sequence": 9, "describe": 10, "store_sql": 11,
          "close_sql": 12, "get_autocommit": 13}


def p_ws_request(r):
    t = r["type"]
    body = p_ints(r, [(1, "stream_id")]) if t not in ("close_cursor", "fetch_cursor", "store_sql",
                                                       "close_sql") else b""
    if t == "execute":
        body += fb(2, p_stmt(r["stmt"]))
    elif t == "batch":
        body += fb(2, p_batch(r["batch"]))
    elif t == "open_cursor":
        body += p_ints(r, [(2, "cursor_id")]) + fb(3, p_batch(r["batch"]))
    elif t == "close_cursor":
        body += p_ints(r, [(1, "cursor_id")])
    elif t == "fetch_cursor":
        body += p_ints(r, [(1, "cursor_id"), (2, "max_count")])
    elif t in ("sequence", "describe"):
        body += p_sql(r, 2)
    elif t == "store_sql":
        body += p_ints(r, [(1, "sql_id")]) + fb(2, r["sql"])
    elif t == "close_sql":
        body += p_ints(r, [(1, "sql_id")])
    return fb(WS_REQ[t], body)


# ---- answers in one form: from Protobuf ... ----

def d_value(b):
    f = parse(b)
    if 2 in f:
        return ("integer", unzigzag(one(f, 2)))
    if 3 in f:
        return ("float", struct.unpack("<d", one(f, 3))[0])
    if 4 in f:
        return ("text", one(f, 4).decode())
    if 5 in f:
        return ("blob", bytes(one(f, 5)))
    return ("null",)


def d_cols(bs):
    return [(none_str(parse(c), 1), none_str(parse(c), 2)) for c in bs]


def none_str(f, num):
    return one(f, num).decode() if num in f else None


def d_row(b):
    return [d_value(v) for v in parse(b).get(1, [])]


def d_error(b):
    f = parse(b)
    return ("error", none_str(f, 2), none_str(f, 1) or "")


def d_stmt_result(b):
    f = parse(b)
    rowid = one(f, 4)
    return {"cols": d_cols(f.get(1, [])), "rows": [d_row(r) for r in f.get(2, [])],
            "affected_row_count": one(f, 3, 0),
            "last_insert_rowid": None if rowid is None else unzigzag(rowid)}


def d_map(bs, dec):
    out = {}
    for e in bs:
        f = parse(e)
        out[one(f, 1, 0)] = dec(one(f, 2, b""))
    return out


def d_batch_result(b):
    f = parse(b)
    return {"results": d_map(f.get(1, []), d_stmt_result), "errors": d_map(f.get(2, []), d_error)}


def d_describe(b):
    f = parse(b)
    return {"params": [none_str(parse(p), 1) for p in f.get(1, [])], "cols": d_cols(f.get(2, [])),
            "is_explain": bool(one(f, 3, 0)), "is_readonly": bool(one(f, 4, 0))}


def d_entry(b):
    f = parse(b)
    if 1 in f:
        g = parse(one(f, 1))
        return ("step_begin", one(g, 1, 0), d_cols(g.get(2, [])))
    if 2 in f:
        g = parse(one(f, 2))
        rowid = one(g, 2)
        return ("step_end", one(g, 1, 0), None if rowid is None else unzigzag(rowid))
    if 3 in f:
        g = parse(one(f, 3))
        return ("step_error", one(g, 1, 0), d_error(one(g, 2, b"")))
    if 4 in f:
        return ("row", d_row(one(f, 4)))
    return ("error", d_error(one(f, 5, b"")))


def d_response(num, b, names):
    t = {v: k for k, v in names.items()}[num]
    f = parse(b)
    if t == "execute":
        return ("ok", t, d_stmt_result(one(f, 1, b"")))
    if t == "batch":
        return ("ok", t, d_batch_result(one(f, 1, b"")))
    if t == "describe":
        return ("ok", t, d_describe(one(f, 1, b"")))
    if t == "get_autocommit":
        return ("ok", t, bool(one(f, 1, 0)))
    if t == "fetch_cursor":
        return ("ok", t, ([d_entry(e) for e in f.get(1, [])], bool(one(f, 2, 0))))
    return ("ok", t, None)


# ---- ... and from JSON ----

def j_value(v):
    t = v["type"]
    if t == "integer":
        return ("integer", int(v["value"]))
    if t == "float":
        return ("float", float(v["value"]))
    if t == "text":
        return ("text", v["value"])
    if t == "blob":
        return ("blob", base64.b64decode(v["base64"]))
    return ("null",)


def j_cols(cs):
    return [(c.get("name"), c.get("decltype")) for c in cs]


def j_error(e):
    return ("error", e.get("code"), e["message"])


def j_stmt_result(r):
    rowid = r.get("last_insert_rowid")
    return {"cols": j_cols(r["cols"]), "rows": [[j_value(v) for v in row] for row in r["rows"]],
            "affected_row_count": r["affected_row_count"],
            "last_insert_rowid": None if rowid is None else int(rowid)}


def j_entry(e):
    t = e["type"]
    if t == "step_begin":
        return (t, e["step"], j_cols(e["cols"]))
    if t == "step_end":
        rowid = e.get("last_insert_rowid")
        return (t, e["affected_row_count"], None if rowid is None else int(rowid))
    if t == "step_error":
        return (t, e["step"], j_error(e["error"]))
    if t == "row":
        return (t, [j_value(v) for v in e["row"]])
    return (t, j_error(e["error"]))


def j_response(r):
    t = r["type"]
    if t == "execute":
        return ("ok", t, j_stmt_result(r["result"]))
    if t == "batch":
        b = r["result"]
        return ("ok", t, {
            "results": {i: j_stmt_result(x) for i, x in enumerate(b["step_results"]) if x},
            "errors": {i: j_error(x) for i, x in enumerate(b["step_errors"]) if x}})
    if t == "describe":
        d = r["result"]
        return ("ok", t, {"params": [p.get("name") for p in d["params"]],
                          "cols": j_cols(d["cols"]), "is_explain": d["is_explain"],
                          "is_readonly": d["is_readonly"]})
    if t == "get_autocommit":
        return ("ok", t, r["is_autocommit"])
    if t == "fetch_cursor":
        return ("ok", t, ([j_entry(e) for e in r["entries"]], r["done"]))
    return ("ok", t, None)


# ---- transports ----

def post(path, body, ctype):
    c = http.client.HTTPConnection(HOST, PORT, timeout=10)
    c.request("POST", path, body, {"Content-Type": ctype})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, r.getheader("Content-Type"), raw


def pipeline_json(reqs, baton=None):
    st, ct, raw = post("/v3/pipeline", json.dumps({"baton": baton, "requests": reqs}),
                       "application/json")
    assert st == 200, (st, raw)
    body = json.loads(raw)
    res = [j_response(r["response"]) if r["type"] == "ok" else j_error(r["error"])
           for r in body["results"]]
    return res, body["baton"]


def pipeline_pb(reqs, baton=None):
    body = (fb(1, baton) if baton else b"") + b"".join(fb(2, p_http_request(r)) for r in reqs)
    st, ct, raw = post("/v3-protobuf/pipeline", body, "application/x-protobuf")
    assert st == 200 and ct == "application/x-protobuf", (st, ct, raw)
    f = parse(raw)
    res = []
    for r in f.get(3, []):
        g = parse(r)
        if 1 in g:
            (num, b), = [(k, v[0]) for k, v in parse(one(g, 1)).items()]
            res.append(d_response(num, b, HTTP_REQ))
        else:
            res.append(d_error(one(g, 2, b"")))
    return res, none_str(f, 1)


def settled(x):
    """x with last_insert_rowid dropped where no row was written: it is the
    connection's (the spec leaves it undefined then), and a stream's pooled
    connection may have written before."""
    if isinstance(x, dict):
        y = {k: settled(v) for k, v in x.items()}
        if y.get("affected_row_count") == 0:
            y["last_insert_rowid"] = None
        return y
    if isinstance(x, tuple) and x[:1] == ("step_end",) and x[1] == 0:
        return ("step_end", 0, None)
    if isinstance(x, (list, tuple)):
        return type(x)(settled(v) for v in x)
    return x


def same(a, b):
    a, b = settled(a), settled(b)
    if a != b:
        for x, y in zip(a, b):
            if x != y:
                raise AssertionError("json %r != protobuf %r" % (x, y))
        raise AssertionError("json %r != protobuf %r" % (a, b))


def fresh(sql="CREATE TABLE pbt(i INTEGER PRIMARY KEY, x, y TEXT)"):
    return {"type": "sequence", "sql": "DROP TABLE IF EXISTS pbt; " + sql}


def stmt(sql, *args, **kw):
    s = {"sql": sql, "args": list(args)}
    s.update(kw)
    return {"type": "execute", "stmt": s}


I = lambda n: {"type": "integer", "value": str(n)}  # noqa: E731
F = lambda x: {"type": "float", "value": x}  # noqa: E731
T = lambda s: {"type": "text", "value": s}  # noqa: E731
B = lambda b: {"type": "blob", "base64": base64.b64encode(b).decode()}  # noqa: E731
N = {"type": "null"}

VALUES = [I(2**62 + 1), I(-(2**63)), I(-7), F(1.5), F(-2.25e300), T("h\u00e9llo \u2603"), T(""),
          B(bytes(range(256))), B(b""), N]


def both(*rounds):
    """Run rounds of requests (one pipeline each, the baton carried) in both
    encodings and compare; returns the Protobuf answers."""
    outs = []
    for run in (pipeline_json, pipeline_pb):
        baton, out = None, []
        for reqs in rounds:
            res, baton = run(reqs, baton)
            out.append(res)
        outs.append((out, baton))
    same(outs[0][0], outs[1][0])
    assert (outs[0][1] is None) == (outs[1][1] is None), "batons differ"
    return outs[1][0]


@case
def values_and_execute():
    """protobuf pipeline: execute with every value type, named args, rows"""
    out = both([fresh(),
                stmt("INSERT INTO pbt(x) VALUES (?)", VALUES[0]),
                *[stmt("INSERT INTO pbt(x) VALUES (?)", v) for v in VALUES[1:]],
                {"type": "execute", "stmt": {"sql": "INSERT INTO pbt(x, y) VALUES (:a, @b)",
                                             "named_args": [{"name": ":a", "value": I(42)},
                                                            {"name": "b", "value": T("named")}]}},
                stmt("SELECT i, x, typeof(x), y FROM pbt ORDER BY i"),
                stmt("SELECT x FROM pbt", want_rows=False),
                stmt("SELECT ? AS a, ? AS b, ?", *VALUES[:3])])
    rows = out[0][-3][2]["rows"]
    assert [r[1] for r in rows[:len(VALUES)]] == [j_value(v) for v in VALUES], rows
    assert out[0][-2][2]["rows"] == [] and out[0][1][2]["last_insert_rowid"] == 1


@case
def protobuf_only_values():
    """protobuf values JSON cannot carry: NaN and infinite floats, NUL inside text, raw blobs"""
    inf = float("inf")
    res, _ = pipeline_pb([fresh(),
                          stmt("SELECT ?1, typeof(?1), ?2, ?3, typeof(?3)", F(float("nan")), F(inf), F(-inf)),
                          stmt("INSERT INTO pbt(x) VALUES (?)", T("a\x00b\x00")),
                          stmt("SELECT x, length(CAST(x AS BLOB)), hex(x), typeof(x) FROM pbt"),
                          stmt("SELECT 9e999, -9e999, ?", B(b"\x00\xff" * 1000))])
    assert all(r[0] == "ok" for r in res), res
    row = res[1][2]["rows"][0]
    # NaN binds as NULL (as SQLite binds it); infinities stay infinite
    assert row == [("null",), ("text", "null"), ("float", inf), ("float", -inf), ("text", "real")], row
    row = res[3][2]["rows"][0]
    assert row == [("text", "a\x00b\x00"), ("integer", 4), ("text", "61006200"), ("text", "text")], row
    row = res[4][2]["rows"][0]
    assert row == [("float", inf), ("float", -inf), ("blob", b"\x00\xff" * 1000)], row


@case
def errors():
    """protobuf pipeline: errors carry the same codes and messages"""
    out = both([fresh(),
                stmt("INSERT INTO pbt(i) VALUES (1)"),
                stmt("INSERT INTO pbt(i) VALUES (1)"),
                stmt("SELEC 1"),
                stmt("SELECT 1; SELECT 2"),
                stmt("SELECT ?", I(1), I(2)),
                {"type": "execute", "stmt": {"sql_id": 77}},
                {"type": "sequence", "sql": "SELECT 1; NOPE"},
                {"type": "close_sql", "sql_id": 77},
                {"type": "get_autocommit"},
                {"type": "close"},
                {"type": "get_autocommit"}])
    codes = [r[1] for r in out[0][2:8]]
    assert codes == ["SQLITE_CONSTRAINT", "SQL_PARSE_ERROR", "SQL_MANY_STATEMENTS",
                     "ARGS_INVALID", "SQL_ID_INVALID", "SQL_PARSE_ERROR"], codes
    assert out[0][-1][1] == "STREAM_CLOSED", out[0][-1]


@case
def batches():
    """protobuf pipeline: batch with every condition type"""
    ok, err = (lambda i: {"type": "ok", "step": i}), (lambda i: {"type": "error", "step": i})
    steps = [
        {"stmt": {"sql": "BEGIN"}},
        {"stmt": {"sql": "INSERT INTO pbt(i, x) VALUES (1, 'a')"}, "condition": ok(0)},
        {"stmt": {"sql": "INSERT INTO pbt(i, x) VALUES (1, 'dup')"}, "condition": ok(1)},
        {"stmt": {"sql": "COMMIT"},
         "condition": {"type": "and", "conds": [ok(1), {"type": "not", "cond": err(2)}]}},
        {"stmt": {"sql": "ROLLBACK"}, "condition": {"type": "or", "conds": [err(2), ok(3)]}},
        {"stmt": {"sql": "SELECT count(*) FROM pbt"}, "condition": {"type": "is_autocommit"}},
        {"stmt": {"sql": "SELECT 'skipped'"}, "condition": {"type": "not", "cond":
                                                            {"type": "is_autocommit"}}},
    ]
    out = both([fresh(), {"type": "batch", "batch": {"steps": steps}}, {"type": "close"}])
    b = out[0][1][2]
    assert sorted(b["results"]) == [0, 1, 4, 5] and sorted(b["errors"]) == [2], b
    assert b["errors"][2][1] == "SQLITE_CONSTRAINT", b["errors"]


@case
def describe_store_sequence():
    """protobuf pipeline: describe, store_sql/close_sql, sequence, get_autocommit"""
    both([fresh(),
          {"type": "describe", "sql": "SELECT i AS n, y FROM pbt WHERE i = ? AND y = :name"},
          {"type": "describe", "sql": "EXPLAIN SELECT 1"},
          {"type": "describe", "sql": "INSERT INTO pbt(x) VALUES (?1)"},
          {"type": "store_sql", "sql_id": 5, "sql": "INSERT INTO pbt(x) VALUES (?)"},
          {"type": "store_sql", "sql_id": 0, "sql": "SELECT count(*) FROM pbt"},
          {"type": "store_sql", "sql_id": 5, "sql": "SELECT 1"},
          {"type": "execute", "stmt": {"sql_id": 5, "args": [T("s")]}},
          {"type": "execute", "stmt": {"sql_id": 0}},
          {"type": "describe", "sql_id": 0},
          {"type": "sequence", "sql": "BEGIN; INSERT INTO pbt(x) VALUES (2)"},
          {"type": "get_autocommit"}],
         [{"type": "close_sql", "sql_id": 5}, {"type": "execute", "stmt": {"sql_id": 5}},
          {"type": "sequence", "sql": "COMMIT"}, {"type": "get_autocommit"},
          stmt("SELECT * FROM pbt"), {"type": "close"}])


def cursor_json(batch):
    st, ct, raw = post("/v3/cursor", json.dumps({"baton": None, "batch": batch}),
                       "application/json")
    assert st == 200, (st, raw)
    lines = raw.decode().strip().split("\n")
    head = json.loads(lines[0])
    return head["baton"] is not None, [j_entry(json.loads(x)) for x in lines[1:]]


def cursor_pb(batch):
    st, ct, raw = post("/v3-protobuf/cursor", fb(2, p_batch(batch)), "application/x-protobuf")
    assert st == 200 and ct == "application/x-protobuf", (st, ct, raw)
    msgs, i = [], 0
    while i < len(raw):
        n, i = read_varint(raw, i)
        msgs.append(raw[i:i + n])
        i += n
    return none_str(parse(msgs[0]), 1) is not None, [d_entry(m) for m in msgs[1:]]


@case
def cursors_http():
    """protobuf cursor: length-delimited entries equal the JSON lines"""
    batch = {"steps": [
        {"stmt": {"sql": "SELECT 1 AS a, 'x' AS b, x'00ff', 2.5, NULL UNION ALL SELECT 2, 'y', "
                         "x'', -1e10, 9223372036854775807"}},
        {"stmt": {"sql": "SELECT nope FROM nowhere"}},
        {"stmt": {"sql": "SELECT 3"}, "condition": {"type": "ok", "step": 1}},
        {"stmt": {"sql": "VALUES (?)", "args": VALUES[:1]},
         "condition": {"type": "error", "step": 1}},
    ]}
    a, b = cursor_json(batch), cursor_pb(batch)
    same([a], [b])
    kinds = [e[0] for e in b[1]]
    assert kinds == ["step_begin", "row", "row", "step_end", "step_error", "step_begin", "row",
                     "step_end"], kinds


def ws_exchange(proto, reqs):
    s, rest = wsutil.ws_connect(HOST, PORT, proto)
    pb = proto.endswith("protobuf")
    out = []
    try:
        def send(msg_json, msg_pb):
            s.sendall(wsutil.ws_frame(msg_pb, opcode=2) if pb else
                      wsutil.ws_frame(json.dumps(msg_json).encode()))

        def recv():
            nonlocal rest
            op, payload, rest = wsutil.ws_recv(s, rest)
            assert op == (2 if pb else 1), (op, payload)
            return payload if pb else json.loads(payload)

        send({"type": "hello", "jwt": None}, fb(1, b""))
        h = recv()
        if pb:
            assert 1 in parse(h), parse(h)
        else:
            assert h["type"] == "hello_ok", h
        for k, r in enumerate(reqs):
            send({"type": "request", "request_id": k, "request": r},
                 fb(2, p_ints({"id": k}, [(1, "id")]) + p_ws_request(r)))
            m = recv()
            if pb:
                f = parse(m)
                if 3 in f:
                    g = parse(one(f, 3))
                    assert sint32(one(g, 1, 0)) == k, g
                    (num, b), = [(n, v[0]) for n, v in g.items() if n != 1]
                    out.append(d_response(num, b, WS_REQ))
                else:
                    g = parse(one(f, 4))
                    assert sint32(one(g, 1, 0)) == k, g
                    out.append(d_error(one(g, 2, b"")))
            else:
                assert m["request_id"] == k, m
                out.append(j_response(m["response"]) if m["type"] == "response_ok"
                           else j_error(m["error"]))
    finally:
        s.close()
    return out


@case
def websocket():
    """hrana3-protobuf WebSocket: the same answers as hrana3 (JSON)"""
    batch = {"steps": [{"stmt": {"sql": "INSERT INTO pbt(x) VALUES (?)", "args": [v]}}
                       for v in VALUES] +
             [{"stmt": {"sql": "INSERT INTO pbt(i) VALUES (1)"}},
              {"stmt": {"sql": "SELECT x FROM pbt"}, "condition": {"type": "error", "step": 10}}]}
    reqs = [{"type": "open_stream", "stream_id": 0},  # 0: omitted on the wire (proto3)
            {"type": "open_stream", "stream_id": -5},
            {"type": "sequence", "stream_id": 0, "sql": fresh()["sql"]},
            {"type": "store_sql", "sql_id": 3, "sql": "SELECT x, typeof(x) FROM pbt ORDER BY i"},
            {"type": "batch", "stream_id": 0, "batch": batch},
            {"type": "execute", "stream_id": -5, "stmt": {"sql_id": 3}},
            {"type": "execute", "stream_id": 0, "stmt": {"sql": "SELEC"}},
            {"type": "execute", "stream_id": 9, "stmt": {"sql": "SELECT 1"}},
            {"type": "describe", "stream_id": 0, "sql": "SELECT x AS v FROM pbt WHERE i > $m"},
            {"type": "open_cursor", "stream_id": 0, "cursor_id": 1,
             "batch": {"steps": [{"stmt": {"sql_id": 3}}, {"stmt": {"sql": "SELECT * FROM no"}}]}},
            {"type": "fetch_cursor", "cursor_id": 1, "max_count": 4},
            {"type": "fetch_cursor", "cursor_id": 1, "max_count": 1000},
            {"type": "close_cursor", "cursor_id": 1},
            {"type": "sequence", "stream_id": 0, "sql": "BEGIN"},
            {"type": "get_autocommit", "stream_id": 0},
            {"type": "get_autocommit", "stream_id": -5},
            {"type": "close_sql", "sql_id": 3},
            {"type": "execute", "stream_id": 0, "stmt": {"sql_id": 3}},
            {"type": "close_stream", "stream_id": 0},
            {"type": "close_stream", "stream_id": -5}]
    a = ws_exchange("hrana3", reqs)
    b = ws_exchange("hrana3-protobuf", reqs)
    same(a, b)
    assert b[7][1] == "STREAM_NOT_FOUND" and b[6][1] == "SQL_PARSE_ERROR", (b[6], b[7])
    assert b[14] == ("ok", "get_autocommit", False), b[14]


@case
def malformed():
    """malformed Protobuf: 400 HTTP_BODY_INVALID in JSON, the server lives on"""
    for body in (b"\xff\xff\xff", b"\x12\x05ab", b"\x0f", fb(2, b"\x08")):
        st, ct, raw = post("/v3-protobuf/pipeline", body, "application/x-protobuf")
        assert st == 400 and ct == "application/json", (body, st, ct, raw)
        assert json.loads(raw)["code"] == "HTTP_BODY_INVALID", raw
    # a condition nested 100,000 deep: refused before protobuf-c recurses
    cond = fv(1, 0)
    for _ in range(100000):
        cond = fb(3, cond)
    deep = fb(2, fb(3, fb(1, fb(1, fb(1, cond) + fb(2, fb(1, "SELECT 1"))))))
    st, ct, raw = post("/v3-protobuf/pipeline", deep, "application/x-protobuf")
    assert st in (400, 413), (st, raw)
    st, ct, raw = post("/v3-protobuf/cursor", b"\x12\xff", "application/x-protobuf")
    assert st == 400, (st, raw)
    # an empty StreamRequest (a type this server does not know) is REQUEST_INVALID
    res, _ = pipeline_pb([])
    st, ct, raw = post("/v3-protobuf/pipeline", fb(2, b""), "application/x-protobuf")
    g = parse(one(parse(raw), 3))
    assert st == 200 and d_error(one(g, 2))[1] == "REQUEST_INVALID", raw
    c = http.client.HTTPConnection(HOST, PORT, timeout=10)
    c.request("GET", "/v3-protobuf")
    assert c.getresponse().status == 200
    c.close()
    res, _ = pipeline_pb([{"type": "get_autocommit"}])
    assert res == [("ok", "get_autocommit", True)], res


@case
def websocket_violations():
    """hrana3-protobuf: text frames and garbage close the socket"""
    for frame, code in ((wsutil.ws_frame(b'{"type":"hello"}'), 1003),
                        (wsutil.ws_frame(b"\xff\xff", opcode=2), 1002),
                        (wsutil.ws_frame(b"", opcode=2), 1002)):
        s, rest = wsutil.ws_connect(HOST, PORT, "hrana3-protobuf")
        s.sendall(frame)
        op, payload, rest = wsutil.ws_recv(s, rest)
        s.close()
        assert op == 8 and struct.unpack(">H", payload[:2])[0] == code, (op, payload)


sys.exit(1 if failures else 0)
