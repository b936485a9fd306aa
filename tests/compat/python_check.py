"""python_check.py -- Python's sqlite3 module on Shale.

Run by tests/compat/test_compat.c with LD_LIBRARY_PATH=BUILD/compat: the
interpreter's _sqlite3 extension then loads Shale's libsqlite3.so.0. Checks
that it really did (the mapped library's path and sqlite3_sourceid()), then
uses the module the way applications do. Prints "python on shale: ok" and
exits 0 when every check passes; an AssertionError otherwise.
"""
import ctypes
import os
import sqlite3
import tempfile

maps = open("/proc/self/maps").read()
lib = [l.split()[-1] for l in maps.splitlines() if "libsqlite3.so" in l]
assert lib and all("/compat/libsqlite3.so.0" in p for p in lib), lib
src = ctypes.CDLL(lib[0]).sqlite3_sourceid
src.restype = ctypes.c_char_p
assert b"shale" in src(), src()
assert sqlite3.sqlite_version == "3.40.1", sqlite3.sqlite_version

con = sqlite3.connect(":memory:")
con.execute("create table t(id integer primary key, i int, r real, s text, b blob)")
con.executemany("insert into t(i, r, s, b) values (?, ?, ?, ?)",
                [(1, 1.5, "one", b"\x00\x01"), (2, None, "two", None), (None, -0.25, None, b"")])
con.commit()
rows = con.execute("select i, r, s, b from t order by id").fetchall()
assert rows == [(1, 1.5, "one", b"\x00\x01"), (2, None, "two", None), (None, -0.25, None, b"")], rows
assert con.execute("select count(*), sum(i) from t where s like :p", {"p": "t%"}).fetchone() == (1, 2)
cur = con.execute("select id as ident, s from t")
assert [d[0] for d in cur.description] == ["ident", "s"]
cur.fetchall()  # see docs/compat.md: a write beside an active reader
assert con.total_changes == 3

# errors map onto the module's exception classes
try:
    con.execute("select * from nope")
    raise AssertionError("no error")
except sqlite3.OperationalError as e:
    assert str(e) == "no such table: nope", e
con.execute("create table u(a unique)")
con.execute("insert into u values (1)")
try:
    con.execute("insert into u values (1)")
    raise AssertionError("no error")
except sqlite3.IntegrityError as e:
    assert str(e) == "UNIQUE constraint failed: u.a", e

# transactions: implicit BEGIN before DML, rollback undoes
con.commit()
assert not con.in_transaction
con.execute("insert into u values (2)")
assert con.in_transaction
con.rollback()
assert con.execute("select count(*) from u").fetchone() == (1,)
with con:
    con.execute("insert into u values (3)")
assert con.execute("select count(*) from u").fetchone() == (2,)

# executescript (prepare with tails), row factories, iterdump
con.executescript("create table v(x); insert into v values (1); insert into v values ('a');")
con.row_factory = sqlite3.Row
r = con.execute("select x from v order by rowid").fetchall()
assert [tuple(x) for x in r] == [(1,), ("a",)]
con.row_factory = None
dump = "\n".join(con.iterdump())
assert 'CREATE TABLE v(x);' in dump and "INSERT INTO \"v\" VALUES('a');" in dump, dump

# user functions, aggregates, collations
con.create_function("twice", 1, lambda x: None if x is None else x * 2)
assert con.execute("select twice(21), twice('ab'), twice(null)").fetchone() == (42, "abab", None)
def boom(x):
    raise ValueError("no")
con.create_function("boom", 1, boom)
try:
    con.execute("select boom(1)").fetchone()
    raise AssertionError("boom() succeeded")
except sqlite3.OperationalError as e:
    assert "user-defined function raised exception" in str(e), e
class Cat:
    def __init__(self):
        self.parts = []
    def step(self, v):
        self.parts.append(str(v))
    def finalize(self):
        return "+".join(self.parts)
con.create_aggregate("cat", 1, Cat)
assert con.execute("select cat(x) from v").fetchone() == ("1+a",)
con.create_collation("rev", lambda a, b: (a < b) - (a > b))
con.executescript("create table w(s); insert into w values ('a'),('c'),('b');")
assert [r[0] for r in con.execute("select s from w order by s collate rev")] == ["c", "b", "a"]
if hasattr(con, "create_window_function"):
    class WSum:
        def __init__(self):
            self.t = 0
        def step(self, v):
            self.t += v
        def inverse(self, v):
            self.t -= v
        def value(self):
            return self.t
        def finalize(self):
            return self.t
    con.create_window_function("wsum", 1, WSum)
con.close()

# a file database, reopened by a second connection
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "x.db")
    a = sqlite3.connect(path)
    a.execute("create table k(v)")
    a.execute("insert into k values ('persisted')")
    a.commit()
    a.close()
    b = sqlite3.connect(path)
    assert b.execute("select v from k").fetchall() == [("persisted",)]
    b.close()

print("python on shale: ok")
