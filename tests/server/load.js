// load.js -- a bounded load test of build/shale-server (loopback only; not part
// of `make test`): CLIENTS concurrent @libsql/client clients (default 64) for
// SECONDS (default 60), each looping over a mix of point reads (70%), range
// reads (10%), single-row inserts (15%) and write batches (5%). Prints
// requests/s, p50/p99 latency, errors by code, and the server's peak RSS.
//   tests/server/load.sh [SECONDS] [CLIENTS] [http|ws]   starts a server and runs this
// Environment: SHALE_URL, SHALE_SERVER_PID (for the RSS), SECONDS, CLIENTS.
"use strict";
const fs = require("node:fs");
const { createClient } = require("@libsql/client");

const url = process.env.SHALE_URL;
const seconds = Number(process.env.SECONDS || 60);
const nclients = Number(process.env.CLIENTS || 64);

function peakRss(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch { return NaN; }
}

(async () => {
  const setup = createClient({ url });
  await setup.execute("CREATE TABLE IF NOT EXISTS load(id INTEGER PRIMARY KEY, k INTEGER, v TEXT)");
  await setup.execute("CREATE INDEX IF NOT EXISTS load_k ON load(k)");
  await setup.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 10000) " +
                      "INSERT OR IGNORE INTO load SELECT i, i % 100, 'row ' || i FROM c");
  setup.close();
  const lat = [];
  const errors = {};
  let done = 0;
  const end = Date.now() + seconds * 1000;
  async function worker(w) {
    const c = createClient({ url, intMode: "bigint" });
    let i = w;
    while (Date.now() < end) {
      i = (i * 1103515245 + 12345) % 2147483648;
      const r = i % 100;
      const t0 = process.hrtime.bigint();
      try {
        if (r < 70) await c.execute({ sql: "SELECT v FROM load WHERE id = ?", args: [BigInt(i % 10000 + 1)] });
        else if (r < 80) await c.execute({ sql: "SELECT count(*), max(v) FROM load WHERE k = ?", args: [BigInt(i % 100)] });
        else if (r < 95) await c.execute({ sql: "INSERT INTO load(k, v) VALUES (?, ?)", args: [BigInt(i % 100), "w" + w] });
        else await c.batch([{ sql: "INSERT INTO load(k, v) VALUES (?, 'b1')", args: [BigInt(r)] },
                            { sql: "UPDATE load SET v = 'b2' WHERE id = ?", args: [BigInt(i % 10000 + 1)] }], "write");
        lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
        done++;
      } catch (e) {
        errors[e.code || e.message] = (errors[e.code || e.message] || 0) + 1;
      }
    }
    c.close();
  }
  const t0 = Date.now();
  await Promise.all(Array.from({ length: nclients }, (_, w) => worker(w + 1)));
  const dt = (Date.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))].toFixed(2);
  console.log(`${nclients} clients, ${dt.toFixed(1)} s, ${url.split(":")[0]}: ${done} requests, ` +
              `${(done / dt).toFixed(0)} requests/s, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, ` +
              `errors ${JSON.stringify(errors)}, server peak RSS ` +
              `${peakRss(process.env.SHALE_SERVER_PID).toFixed(1)} MiB`);
  process.exit(Object.keys(errors).length ? 1 : 0);
})();
