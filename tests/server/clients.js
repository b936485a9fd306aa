// clients.js -- the real libSQL clients against build/shale-server (run by
// tests/server/run.sh, which starts the servers and passes them here):
//   SHALE_URL_OPEN   http://127.0.0.1:P   server without auth (short stream/txn timeouts)
//   SHALE_URL_AUTH   http://127.0.0.1:Q   server with --auth-jwt-key-file
//   SHALE_KEY_GOOD / SHALE_KEY_OTHER      Ed25519 private keys (PEM): the server's, another
// Each check prints "ok NAME" or "FAIL NAME: why"; run.sh counts them.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const { createClient, LibsqlError, LibsqlBatchError } = require("@libsql/client");
const hrana = require("@libsql/hrana-client");

let failures = 0;
function ok(name) { console.log("ok " + name); }
function fail(name, why) { failures++; console.log("FAIL " + name + ": " + why); }
async function check(name, fn) {
  try {
    await fn();
    ok(name);
  } catch (e) {
    fail(name, (e && e.stack) || e);
  }
}
function eq(a, b, what) {
  const show = (v) => JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x + "n" : x));
  const sa = show(a), sb = show(b);
  if (sa !== sb) throw new Error((what || "value") + ": got " + sa + ", want " + sb);
}
async function throws(fn, test, what) {
  let err;
  try { await fn(); } catch (e) { err = e; }
  if (!err) throw new Error((what || "call") + " did not fail");
  if (test && !test(err)) throw new Error((what || "call") + " failed wrongly: " + err.name + " " + err.code + " " + err.message);
  return err;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- tokens ----
function b64url(buf) { return Buffer.from(buf).toString("base64url"); }
function token(keyPem, claims) {
  const head = b64url(JSON.stringify({ alg: "EdDSA", typ: "JWT" }));
  const body = b64url(JSON.stringify(claims));
  const sig = crypto.sign(null, Buffer.from(head + "." + body), crypto.createPrivateKey(keyPem));
  return head + "." + body + "." + b64url(sig);
}

async function suite(kind, url) {
  const c = createClient({ url, intMode: "bigint" });
  const t = (n) => kind + " " + n;
  const tbl = "t_" + kind;
  await c.execute(`DROP TABLE IF EXISTS ${tbl}`);
  await c.execute(`CREATE TABLE ${tbl}(id INTEGER PRIMARY KEY, a, b TEXT UNIQUE)`);

  await check(t("positional and named arguments"), async () => {
    let r = await c.execute({ sql: `INSERT INTO ${tbl}(id, a, b) VALUES (?, ?, ?)`, args: [1, "one", "x1"] });
    eq(r.rowsAffected, 1, "rowsAffected");
    eq(r.lastInsertRowid, 1n, "lastInsertRowid");
    for (const p of [":", "@", "$"]) {
      r = await c.execute({ sql: `SELECT ${p}v + 1 AS w, ${p}s AS s`, args: { v: 41n, s: "q" } });
      eq(r.rows[0].w, 42n, p + " value");
      eq(r.rows[0].s, "q", p + " text");
    r = await c.execute({ sql: `SELECT ${p}v / 2 AS h`, args: { v: 5 } });
    eq(r.rows[0].h, 2.5, p + " a JS number is a float");
    }
    r = await c.execute({ sql: "SELECT ?2, ?1", args: ["a", "b"] });
    eq([r.rows[0][0], r.rows[0][1]], ["b", "a"], "?NNN");
  });

  await check(t("every value type"), async () => {
    const big = 9007199254740993n; // 2^53 + 1
    const blob = new Uint8Array([0, 1, 2, 250, 255]);
    const r = await c.execute({
      sql: "SELECT ? AS n, ? AS i, ? AS big, ? AS neg, ? AS f, ? AS s, ? AS b, typeof(?) AS bt",
      args: [null, 7n, big, -9223372036854775808n, 2.5, "héllo \u{1F600} \u0000 end", blob, blob],
    });
    const row = r.rows[0];
    eq(row.n, null, "null");
    eq(row.i, 7n, "integer");
    eq(row.big, big, "2^53+1");
    eq(row.neg, -9223372036854775808n, "min int64");
    eq(row.f, 2.5, "float");
    eq(row.s, "héllo \u{1F600} \u0000 end", "text");
    eq(Array.from(new Uint8Array(row.b)), Array.from(blob), "blob");
    eq(row.bt, "blob", "blob type");
    const r2 = await c.execute("SELECT 1e308 * 10 AS inf, 0.1 + 0.2 AS f, 9223372036854775807 AS mx, x'' AS e");
    eq(r2.rows[0].f, 0.1 + 0.2, "float precision");
    eq(r2.rows[0].mx, 9223372036854775807n, "max int64");
    eq(r.columns, ["n", "i", "big", "neg", "f", "s", "b", "bt"], "columns");
  });

  await check(t("batch whose second statement fails commits nothing"), async () => {
    const err = await throws(() => c.batch([
      { sql: `INSERT INTO ${tbl}(id, a, b) VALUES (10, 'p', 'x10')` },
      { sql: `INSERT INTO ${tbl}(id, a, b) VALUES (1, 'dup', 'x11')` },
      { sql: `INSERT INTO ${tbl}(id, a, b) VALUES (12, 'q', 'x12')` },
    ], "write"), (e) => e instanceof LibsqlBatchError, "batch");
    eq(err.statementIndex, 1, "statementIndex");
    eq(err.code, "SQLITE_CONSTRAINT", "code");
    const r = await c.execute(`SELECT count(*) AS n FROM ${tbl} WHERE id IN (10, 12)`);
    eq(r.rows[0].n, 0n, "rows committed");
    const ok3 = await c.batch([
      `INSERT INTO ${tbl}(id, a, b) VALUES (20, 'r', 'x20')`,
      `SELECT a FROM ${tbl} WHERE id = 20`,
    ], "write");
    eq(ok3[1].rows[0].a, "r", "batch result");
  });

  await check(t("interactive transaction: commit and rollback"), async () => {
    const tx = await c.transaction("write");
    await tx.execute({ sql: `INSERT INTO ${tbl}(id, a, b) VALUES (30, 'tx', 'x30')` });
    let r = await tx.execute(`SELECT a FROM ${tbl} WHERE id = 30`);
    eq(r.rows[0].a, "tx", "read own write");
    await tx.commit();
    r = await c.execute(`SELECT a FROM ${tbl} WHERE id = 30`);
    eq(r.rows.length, 1, "committed");
    const tx2 = await c.transaction("write");
    await tx2.execute(`DELETE FROM ${tbl} WHERE id = 30`);
    await tx2.execute(`INSERT INTO ${tbl}(id, a, b) VALUES (31, 'gone', 'x31')`);
    await tx2.rollback();
    r = await c.execute(`SELECT id FROM ${tbl} WHERE id IN (30, 31) ORDER BY id`);
    eq(r.rows.map((x) => x.id), [30n], "rolled back");
  });

  await check(t("executeMultiple stops at a syntax error"), async () => {
    await c.execute("DROP TABLE IF EXISTS m_" + kind);
    await throws(() => c.executeMultiple(`CREATE TABLE m_${kind}(x); INSERT INTO m_${kind} VALUES (1); SELEC oops; INSERT INTO m_${kind} VALUES (2);`),
      (e) => e instanceof LibsqlError, "executeMultiple");
    // The whole text is compiled statement by statement: the first two ran.
    const r = await c.execute(`SELECT count(*) AS n FROM m_${kind}`);
    eq(r.rows[0].n, 1n, "rows before the error");
  });

  await check(t("constraint errors carry SQLite's code"), async () => {
    const e1 = await throws(() => c.execute(`INSERT INTO ${tbl}(id, a, b) VALUES (1, 'x', 'zz')`), (e) => e instanceof LibsqlError);
    eq(e1.code, "SQLITE_CONSTRAINT", "primary key");
    const e2 = await throws(() => c.execute(`INSERT INTO ${tbl}(id, a, b) VALUES (99, 'x', 'x1')`), (e) => e instanceof LibsqlError);
    eq(e2.code, "SQLITE_CONSTRAINT", "unique");
    if (!/UNIQUE constraint failed/.test(e2.message)) throw new Error("message: " + e2.message);
    const e3 = await throws(() => c.execute("SELECT * FROM no_such_table"), (e) => e instanceof LibsqlError);
    eq(e3.code, "SQLITE_ERROR", "no such table");
    const e4 = await throws(() => c.execute("SELEC 1"), (e) => e instanceof LibsqlError);
    eq(e4.code, "SQL_PARSE_ERROR", "syntax error");
  });

  await check(t("the same statement 40 times, and 130 different ones (the client's SQL cache churns)"), async () => {
    for (let i = 0; i < 40; i++) {
      const r = await c.execute({ sql: "SELECT ? * 2 AS d", args: [BigInt(i)] });
      eq(r.rows[0].d, BigInt(i * 2), "round " + i);
    }
    for (let i = 0; i < 130; i++) {
      const r = await c.execute(`SELECT ${i} AS v /* ${i} */`);
      eq(r.rows[0].v, BigInt(i), "text " + i);
    }
  });

  await check(t("an idle transaction times out with a clean error"), async () => {
    const tx = await c.transaction("write");
    await tx.execute(`INSERT INTO ${tbl}(id, a, b) VALUES (40, 'idle', 'x40')`);
    await sleep(2600); // the servers run with 1.5 s timeouts
    const e = await throws(() => tx.execute(`SELECT 1`), (e) => e instanceof LibsqlError, "after timeout");
    if (!/STREAM_EXPIRED|TRANSACTION_TIMEOUT/.test(e.code + " " + e.message)) throw new Error("code " + e.code + ": " + e.message);
    tx.close();
    const r = await c.execute(`SELECT count(*) AS n FROM ${tbl} WHERE id = 40`);
    eq(r.rows[0].n, 0n, "the idle write was rolled back");
  });
  c.close();
}

async function authSuite(kind, url) {
  const good = fs.readFileSync(process.env.SHALE_KEY_GOOD, "utf8");
  const other = fs.readFileSync(process.env.SHALE_KEY_OTHER, "utf8");
  const now = Math.floor(Date.now() / 1000);
  const t = (n) => kind + " auth " + n;
  const use = (authToken) => createClient({ url, authToken });
  await check(t("valid token"), async () => {
    const c = use(token(good, { exp: now + 600 }));
    await c.execute("CREATE TABLE IF NOT EXISTS a_" + kind + "(x)");
    await c.execute("INSERT INTO a_" + kind + " VALUES (1)");
    const r = await c.execute("SELECT count(*) AS n FROM a_" + kind);
    eq(r.rows[0].n >= 1, true, "count");
    c.close();
  });
  const refused = async (tok, what) => {
    const c = use(tok);
    await throws(() => c.execute("SELECT 1"), (e) => e instanceof LibsqlError, what);
    c.close();
  };
  await check(t("expired token refused"), () => refused(token(good, { exp: now - 10 }), "expired"));
  await check(t("wrong-key token refused"), () => refused(token(other, { exp: now + 600 }), "wrong key"));
  await check(t("missing token refused"), () => refused(undefined, "missing"));
  await check(t("garbage token refused"), () => refused("not.a.jwt", "garbage"));
  await check(t("read-only token reads, writes refused"), async () => {
    const c = use(token(good, { exp: now + 600, a: "ro" }));
    const r = await c.execute("SELECT count(*) AS n FROM a_" + kind);
    eq(r.rows[0].n >= 1, true, "read");
    await throws(() => c.execute("INSERT INTO a_" + kind + " VALUES (2)"), (e) => e instanceof LibsqlError, "write");
    c.close();
  });
}

// hrana-client at protocol version 3 speaks Protobuf when the server does:
// subprotocol hrana3-protobuf (listed first) and /v3-protobuf/pipeline and
// /v3-protobuf/cursor (found by GET /v3-protobuf).
async function v3Suite(kind, url) {
  await check("hrana-client v3 (Protobuf) over " + kind + ": values, cursor, describe, get_autocommit, conditions", async () => {
    const client = kind === "http" ? hrana.openHttp(url, undefined, undefined, undefined, 3)
                                   : hrana.openWs(url.replace(/^http/, "ws"), undefined, 3);
    eq(await client.getVersion(), 3, "negotiated version");
    if (kind === "http") eq((await client._endpointPromise).encoding, "protobuf", "encoding");
    const s = client.openStream();
    s.intMode = "bigint";
    const big = 9007199254740993n, blob = new Uint8Array([0, 1, 254, 255]);
    const vr = await s.query(["SELECT ? AS i, ? AS n, ? AS f, ? AS t, ? AS b, ? AS z", [big, -5n, 1.5, "h\u00e9", blob, null]]);
    eq(vr.rows[0].i, big, "integer beyond 2^53");
    eq(vr.rows[0].n, -5n, "negative integer");
    eq(vr.rows[0].f, 1.5, "float");
    eq(vr.rows[0].t, "h\u00e9", "text");
    eq(Array.from(new Uint8Array(vr.rows[0].b)), [0, 1, 254, 255], "blob");
    eq(vr.rows[0].z, null, "null");
    await throws(() => s.query("SELEC 1"), (e) => e.code === "SQL_PARSE_ERROR", "error code");
    s.intMode = "number";
    const d = await s.describe("SELECT :a AS x, ? AS y FROM sqlite_schema");
    eq(d.paramNames, [":a", null], "params");
    eq(d.columns.map((c) => c.name), ["x", "y"], "cols");
    eq(d.isReadonly, true, "readonly");
    const d2 = await s.describe("EXPLAIN SELECT 1");
    eq(d2.isExplain, true, "is_explain");
    eq(await s.getAutocommit(), true, "autocommit before");
    await s.run("BEGIN");
    eq(await s.getAutocommit(), false, "autocommit inside");
    await s.run("ROLLBACK");
    // a cursor batch with every condition type
    const b = s.batch(true);
    const s0 = b.step().run("CREATE TABLE IF NOT EXISTS v3(x)");
    const st1 = b.step();
    const s1 = st1.run("INSERT INTO nope VALUES (1)");
    const s2 = b.step().condition(hrana.BatchCond.error(st1)).query("SELECT 'after error' AS m");
    const s3 = b.step().condition(hrana.BatchCond.ok(st1)).query("SELECT 'not run' AS m");
    const s4 = b.step().condition(hrana.BatchCond.not(hrana.BatchCond.ok(st1))).query("SELECT 'not ok' AS m");
    const s5 = b.step().condition(hrana.BatchCond.and(b, [hrana.BatchCond.isAutocommit(b), hrana.BatchCond.error(st1)])).query("SELECT 2 AS n UNION ALL SELECT 3");
    const s6 = b.step().condition(hrana.BatchCond.or(b, [])).query("SELECT 'empty or' AS m");
    await b.execute();
    await s0;
    await throws(() => s1, null, "failing step");
    eq((await s2).rows[0].m, "after error", "error cond");
    eq(await s3, undefined, "ok cond skipped");
    eq((await s4).rows[0].m, "not ok", "not cond");
    eq((await s5).rows.map((r) => r.n), [2, 3], "and + is_autocommit");
    eq(await s6, undefined, "empty or is false");
    const seq = await s.sequence("INSERT INTO v3 VALUES (1); INSERT INTO v3 VALUES (2);");
    eq(seq, undefined, "sequence");
    eq((await s.queryValue("SELECT count(*) FROM v3")).value >= 2, true, "sequence ran");
    s.close();
    client.close();
  });
}

(async () => {
  const open = process.env.SHALE_URL_OPEN, auth = process.env.SHALE_URL_AUTH;
  await suite("http", open);
  await suite("ws", open.replace(/^http/, "ws"));
  await v3Suite("ws", open);
  await v3Suite("http", open);
  await authSuite("http", auth);
  await authSuite("ws", auth.replace(/^http/, "ws"));
  process.exit(failures ? 1 : 0);
})().catch((e) => {
  console.log("FAIL clients.js: " + ((e && e.stack) || e));
  process.exit(1);
});
