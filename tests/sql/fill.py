#!/usr/bin/env python3
"""fill.py -- write the expected results of tests/sql/*.test from the reference SQLite.

Usage: python3 tests/sql/fill.py [--retype] [--lib libsqlite3.so.0] FILE.test...

Each script is rewritten in place. The author writes the SQL; this tool runs every
record, in order, on a fresh database file (as tests/slt/slt.c does, including
PRAGMA synchronous=OFF after opening) through the reference SQLite's C API (ctypes)
and fills in what SQLite answers:
  * `statement ?`         becomes `statement ok` or `statement error`;
    `statement ok|error` is checked: a mismatch is reported and the run fails.
  * `query * [SORT]`      the type letters are inferred per column: T when any
    value is TEXT or BLOB, or an INTEGER outside the 32-bit range (the I
    rendering keeps only the low 32 bits), or all are NULL; else R when any is REAL, else I; `query TYPES` is kept.
  * a missing SORT becomes `nosort` when the SQL has ORDER BY outside parentheses,
    else `rowsort`.
  * the lines after `----` are replaced by the values rendered by the runner's
    rules (README of /work/shared/slt, rule 6, and slt.c's text form of a REAL),
    hashed when there are more values than the hash threshold.
A query whose prepare fails is reported and the run fails. The tool is only a
generator: tests/unit/slt/test_sql_files.c proves the files pass on SQLite.

A FILE ending in .txt is an error-case list (tests/sql/errors.txt, format at its top):
each case's "=> CODE message" line is (re)written from SQLite on ":memory:".
"""
import ctypes, hashlib, os, re, sys, tempfile

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
sys.path.insert(0, "/work/shared/tools")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../shared/tools"))
import slt_ref  # fmt_real, text_to_i64, text_to_real, real_to_i64, to_i32

lib = None
RETYPE = False  # --retype: infer the type letters of every query again


def load(path):
  global lib
  lib = ctypes.CDLL(path)
  vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
  sig = {
      "sqlite3_open_v2": (ci, [cp, ctypes.POINTER(vp), ci, cp]),
      "sqlite3_close": (ci, [vp]),
      "sqlite3_prepare_v2": (ci, [vp, cp, ci, ctypes.POINTER(vp), vp]),
      "sqlite3_step": (ci, [vp]), "sqlite3_finalize": (ci, [vp]),
      "sqlite3_column_count": (ci, [vp]), "sqlite3_column_type": (ci, [vp, ci]),
      "sqlite3_column_int64": (ctypes.c_int64, [vp, ci]),
      "sqlite3_column_double": (ctypes.c_double, [vp, ci]),
      "sqlite3_column_blob": (vp, [vp, ci]), "sqlite3_column_text": (vp, [vp, ci]),
      "sqlite3_column_bytes": (ci, [vp, ci]), "sqlite3_errmsg": (cp, [vp]),
      "sqlite3_exec": (ci, [vp, cp, vp, vp, vp]), "sqlite3_libversion": (cp, []),
      "sqlite3_extended_errcode": (ci, [vp]),
  }
  for name, (res, args) in sig.items():
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args


def render(t, ty, v):
  """ty: 1 int, 2 real, 3 text, 4 blob, 5 null; v the value (bytes for text/blob)."""
  if ty == 5:
    return b"NULL"
  if t == "I":
    if ty == 1: x = v
    elif ty == 2: x = slt_ref.real_to_i64(v)
    else: x = slt_ref.text_to_i64(v)
    return b"%d" % slt_ref.to_i32(x)
  if t == "R":
    if ty == 2: r = v
    elif ty == 1: r = float(v)
    else: r = slt_ref.text_to_real(v)
    return slt_ref.fmt_real(r).encode()
  if ty == 1: z = b"%d" % v
  elif ty == 2:
    z = b"%.15g" % v
    if not re.search(rb"[.eEin]", z): z += b".0"
  else: z = v
  return slt_ref.fmt_text(z)


def run_query(db, sql):
  st = ctypes.c_void_p()
  rc = lib.sqlite3_prepare_v2(db, sql.encode(), -1, ctypes.byref(st), None)
  if rc != 0 or not st.value:
    msg = lib.sqlite3_errmsg(db).decode()
    lib.sqlite3_finalize(st)
    return None, None, msg
  n = lib.sqlite3_column_count(st)
  rows = []
  while True:
    rc = lib.sqlite3_step(st)
    if rc != 100: break
    row = []
    for i in range(n):
      ty = lib.sqlite3_column_type(st, i)
      if ty == 1: v = lib.sqlite3_column_int64(st, i)
      elif ty == 2: v = lib.sqlite3_column_double(st, i)
      elif ty == 3:
        p = lib.sqlite3_column_text(st, i); k = lib.sqlite3_column_bytes(st, i)
        v = ctypes.string_at(p, k) if k else b""
      elif ty == 4:
        p = lib.sqlite3_column_blob(st, i); k = lib.sqlite3_column_bytes(st, i)
        v = ctypes.string_at(p, k) if k else b""
      else: v = None
      row.append((ty, v))
    rows.append(row)
  err = None if rc == 101 else "step: " + lib.sqlite3_errmsg(db).decode()
  lib.sqlite3_finalize(st)
  return n, rows, err


def order_by_outside(sql):
  depth, out = 0, []
  for ch in sql:
    if ch == "(": depth += 1
    elif ch == ")": depth -= 1
    elif depth == 0: out.append(ch)
  return re.search(r"\bORDER\s+BY\b", "".join(out), re.I) is not None


def fill(path):
  lines = open(path, encoding="utf-8").read().split("\n")
  if lines and lines[-1] == "": lines.pop()
  # records: list of (list of line indexes) ; keep other lines verbatim
  out, i, ok, nrec = [], 0, True, 0
  tmp = tempfile.mkdtemp()
  dbpath = os.path.join(tmp, "test.db")
  db = ctypes.c_void_p()
  assert lib.sqlite3_open_v2(dbpath.encode(), ctypes.byref(db), 6, None) == 0
  lib.sqlite3_exec(db, b"PRAGMA synchronous=OFF", None, None, None)
  threshold = 8
  while i < len(lines):
    if not lines[i].strip() or lines[i].startswith("#"):
      out.append(lines[i]); i += 1; continue
    j = i
    while j < len(lines) and lines[j].strip(): j += 1
    rec = lines[i:j]
    i = j
    body = [l for l in rec if not l.startswith("#")]
    comments = [l for l in rec if l.startswith("#")]
    head = body[0].split()
    where = "%s:%d" % (path, i - len(rec) + 1)
    if head[0] == "hash-threshold":
      threshold = int(head[1]); out.extend(rec); continue
    if head[0] == "statement":
      nrec += 1
      sql = "\n".join(body[1:])
      rc = lib.sqlite3_exec(db, sql.encode(), None, None, None)
      got = "ok" if rc == 0 else "error"
      if head[1] == "?":
        head[1] = got
      elif head[1] != got:
        ok = False
        print("%s: statement %s but SQLite says %s: %s\n  %s" % (
            where, head[1], got, lib.sqlite3_errmsg(db).decode(), sql))
      out.extend(comments + [" ".join(head)] + body[1:])
      continue
    if head[0] != "query":
      print("%s: unknown record %r" % (where, head[0])); ok = False
      out.extend(rec); continue
    nrec += 1
    sqll = []
    for l in body[1:]:
      if l == "----": break
      sqll.append(l)
    sql = "\n".join(sqll)
    n, rows, err = run_query(db, sql)
    if n is None:
      print("%s: query fails to prepare: %s\n  %s" % (where, err, sql)); ok = False
      out.extend(rec); continue
    if err:
      print("%s: query step error (rows kept): %s\n  %s" % (where, err, sql))
    types = head[1]
    if types == "*" or RETYPE:
      types = ""
      for c in range(n):
        kinds = set(r[c][0] for r in rows) - {5}
        wide = any(r[c][0] == 1 and not -2**31 <= r[c][1] < 2**31 for r in rows)
        t = "T" if (not kinds or kinds & {3, 4} or wide) else ("R" if 2 in kinds else "I")
        types += t
      if n == 0: types = "I"
    if len(types) != n:
      print("%s: %d type letters for %d columns" % (where, len(types), n)); ok = False
    sort = head[2] if len(head) > 2 else ("nosort" if order_by_outside(sql) else "rowsort")
    if sort == "nosort" and len(rows) > 1:
      # ties in ORDER BY leave the order to the engine: the reversed scan order shows many
      lib.sqlite3_exec(db, b"PRAGMA reverse_unordered_selects=ON", None, None, None)
      _, rrows, _ = run_query(db, sql)
      lib.sqlite3_exec(db, b"PRAGMA reverse_unordered_selects=OFF", None, None, None)
      if rrows != rows:
        print("%s: nosort result depends on scan order (ties in ORDER BY?)\n  %s" % (where, sql))
        ok = False
    vals = [[render(types[c], r[c][0], r[c][1]) for c in range(min(n, len(types)))]
            for r in rows]
    if sort == "rowsort": vals.sort()
    flat = [v for r in vals for v in r]
    if sort == "valuesort": flat.sort()
    bad = [v for v in flat if not v.strip() or v.startswith(b"#")]
    if bad and not (threshold > 0 and len(flat) > threshold):
      print("%s: a value renders as a blank or comment line (%r); use quote() or hex()\n  %s"
            % (where, bad[0], sql)); ok = False
    if threshold > 0 and len(flat) > threshold:
      h = hashlib.md5(b"".join(v + b"\n" for v in flat)).hexdigest()
      res = ["%d values hashing to %s" % (len(flat), h)]
    else:
      res = [v.decode("latin-1") for v in flat]
    out.extend(comments + [" ".join(["query", types, sort] + head[3:])] + sqll + ["----"] + res)
  lib.sqlite3_close(db)
  for f in os.listdir(tmp): os.unlink(os.path.join(tmp, f))
  os.rmdir(tmp)
  open(path, "w", encoding="utf-8").write("\n".join(out) + "\n")
  print("%s: %d records" % (path, nrec))
  return ok, nrec


def fill_errors(path):
  """errors.txt: one case per block; setup lines, then the statement; writes its
  "=> CODE message" line (extended code and message of the first error)."""
  lines = open(path, encoding="utf-8").read().split("\n")
  if lines and lines[-1] == "": lines.pop()
  out, i, ok, n = [], 0, True, 0
  while i < len(lines):
    if not lines[i].strip() or lines[i].startswith("#"):
      out.append(lines[i]); i += 1; continue
    j = i
    while j < len(lines) and lines[j].strip() and not lines[j].startswith("#"): j += 1
    block = [l for l in lines[i:j] if not l.startswith("=> ")]
    where = "%s:%d" % (path, i + 1)
    i = j
    n += 1
    db = ctypes.c_void_p()
    assert lib.sqlite3_open_v2(b":memory:", ctypes.byref(db), 6, None) == 0
    for l in block[:-1]:
      if lib.sqlite3_exec(db, l.encode(), None, None, None) != 0:
        print("%s: setup fails: %s\n  %s" % (where, lib.sqlite3_errmsg(db).decode(), l))
        ok = False
    st = ctypes.c_void_p()
    rc = lib.sqlite3_prepare_v2(db, block[-1].encode(), -1, ctypes.byref(st), None)
    if rc == 0 and st.value:
      while True:
        rc = lib.sqlite3_step(st)
        if rc != 100: break
      if rc == 101: rc = 0
    if rc == 0:
      print("%s: no error on SQLite\n  %s" % (where, block[-1])); ok = False
      res = "=> 0 not an error"
    else:
      res = "=> %d %s" % (lib.sqlite3_extended_errcode(db), lib.sqlite3_errmsg(db).decode())
    lib.sqlite3_finalize(st)
    lib.sqlite3_close(db)
    out.extend(block + [res])
  open(path, "w", encoding="utf-8").write("\n".join(out) + "\n")
  print("%s: %d cases" % (path, n))
  return ok, n


def main(argv):
  global RETYPE
  libpath = "libsqlite3.so.0"
  if argv and argv[0] == "--retype":
    RETYPE, argv = True, argv[1:]
  if len(argv) > 1 and argv[0] == "--lib":
    libpath, argv = argv[1], argv[2:]
  load(libpath)
  v = lib.sqlite3_libversion().decode()
  if v != "3.40.1":
    print("reference SQLite must be 3.40.1, %s is %s" % (libpath, v)); return 2
  allok, total = True, 0
  for p in argv:
    ok, n = fill_errors(p) if p.endswith(".txt") else fill(p)
    allok &= ok
    total += n
  print("total: %d records" % total)
  return 0 if allok else 1


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
