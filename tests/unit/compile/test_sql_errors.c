/*
 * test_sql_errors.c -- parse errors must read exactly as the reference
 * SQLite's (sqlite3_prepare_v2 errmsg), and what the reference parses must
 * parse here.
 *
 * 1. A corpus of ~500 statements that fail in SQLite's parser.
 * 2. Valid statements over a small schema (t1, t2, t3, v1, index i).
 * 3. Token-level mutations of those statements (delete, duplicate, swap,
 *    truncate, insert a token), each compared with the reference.
 * The reference runs with the same schema so that most mutants fail, if at
 * all, in its parser; only messages of the parse class are compared (a
 * reference error such as "no such column" comes after parsing).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/parse/ast.h"
#include "../../test.h"

static const char *const schema =
    "CREATE TABLE t1(a, b, c); CREATE TABLE t2(a, b, c, d); CREATE TABLE t3(x, y);"
    "CREATE INDEX i ON t1(a); CREATE VIEW v1 AS SELECT * FROM t1;";

/* Messages SQLite produces while parsing (before name resolution). */
static int parse_class(const char *m) {
  static const char *const prefixes[] = {"near \"",
                                         "incomplete input",
                                         "unrecognized token:",
                                         "ORDER BY clause should come after",
                                         "LIMIT clause should come after",
                                         "unknown join type",
                                         "a JOIN clause is required before",
                                         "unknown table option",
                                         "parser stack overflow",
                                         "Expression tree is too large",
                                         "too many terms in compound SELECT",
                                         "unsupported frame specification",
                                         "variable number must be between",
                                         "qualified table names are not allowed",
                                         "the INDEXED BY clause is not allowed",
                                         "the NOT INDEXED clause is not allowed",
                                         "error in generated column",
                                         "syntax error after column name",
                                         "cannot use RETURNING in a trigger",
                                         "cannot use DEFAULT on a generated column",
                                         "generated columns cannot be part of the PRIMARY KEY",
                                         "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY",
                                         "table \"",
                                         "trigger cannot use variables",
                                         "parameters are not allowed in views",
                                         NULL};
  for (int i = 0; prefixes[i]; i++)
    if (!strncmp(m, prefixes[i], strlen(prefixes[i]))) return 1;
  return strstr(m, " columns assigned ") != NULL;
}

static const char *const bad_sql[] = {
    "selec 1",
    "select",
    "select 1 +",
    "select 1 +;",
    "select 1 + -- c",
    "select 1 + /* c",
    "select 'abc",
    "select #",
    "select X'1'",
    "select x'zz'",
    "select x'0g'",
    "select 1 order by 1 union select 2",
    "select 1 limit 1 union select 2",
    "select 1 limit 1 union all select 2",
    "select 1 order by 1 intersect select 2",
    "select 1 order by 1 except select 2",
    "select 1 union select 2 order by 1 union select 3",
    "select * from t1 cross left join t2",
    "select * from t1 left inner join t2",
    "select * from t1 outer join t2",
    "select * from t1 inner outer join t2",
    "select * from t1 left foo join t2",
    "select * from t1 natural cross left join t2",
    "select ?0",
    "select ?250001",
    "select ?1000000000000",
    "create table t(x) without foo",
    "create table t(x) strict2",
    "create table t(x) without rowid, foo",
    "create table t(x) strict, bar",
    "select 1e",
    "select 1.2.3",
    "select 0x",
    "select 12abc",
    "select 1_000",
    "select $",
    "select :",
    "select @",
    "select [abc",
    "select \"abc",
    "select `abc",
    "select a.b.c.d from t1",
    "update t1 set (a,b)=(1,2,3)",
    "update t1 set (a,b)=1",
    "update t1 set (a,b,c)=(1,2)",
    "select .5e2x",
    "select $a::b(c",
    "select $a:b",
    "select 1 from",
    "select * from t1 where",
    "select * from t1 where a =",
    "select * from t1 group by",
    "select * from t1 group a",
    "select * from t1 order a",
    "select * from t1 order by",
    "select * from t1 limit",
    "select * from t1 limit 1 offset",
    "select * from t1 limit 1,",
    "select * from t1 having",
    "select count(* from t1",
    "select count(*) from t1)",
    "select (1",
    "select (1))",
    "select ((1)",
    "select 1,",
    "select ,1",
    "select 1 2",
    "select 1 as",
    "select 1 as 2",
    "select * from t1 as",
    "select * from t1 join",
    "select * from t1 join t2 on",
    "select * from t1 join t2 using",
    "select * from t1 join t2 using ()",
    "select * from t1 join t2 using (a",
    "select * from t1 on a=1",
    "select * from t1 using (a)",
    "select * from (select 1) on 1",
    "select * from (select 1)",
    "select * from ()",
    "select * from (t1",
    "select * from t1 indexed",
    "select * from t1 indexed by",
    "select * from t1 not indexed by",
    "select * from t1 not",
    "select * from t1, ",
    "select * from t1 natural join t2 natural",
    "select distinct",
    "select all",
    "select distinct all 1",
    "select case",
    "select case end",
    "select case when 1 end",
    "select case when 1 then 2",
    "select case when 1 then 2 else end",
    "select case 1 else 2 end",
    "select cast(1)",
    "select cast(1 as)",
    "select cast(1 as int",
    "select cast 1 as int",
    "select cast(as int)",
    "select exists",
    "select exists (1)",
    "select exists (select 1",
    "select not exists select 1",
    "select 1 in",
    "select 1 in (",
    "select 1 in (1,",
    "select 1 in (select 1",
    "select 1 not in",
    "select 1 between",
    "select 1 between 0",
    "select 1 between 0 and",
    "select 1 between 0 or 1 and 2",
    "select 1 not between 0",
    "select 1 like",
    "select 1 like 2 escape",
    "select 1 not",
    "select 1 not 1",
    "select 1 is",
    "select 1 is not",
    "select 1 is distinct",
    "select 1 is distinct 2",
    "select 1 is not distinct from",
    "select 1 isnull 1",
    "select 1 notnull 1",
    "select 1 collate",
    "select 1 collate 1",
    "select 1 ||",
    "select 1 ->",
    "select 1 ->>",
    "select -",
    "select ~",
    "select not",
    "select f(",
    "select f(1",
    "select f(1,",
    "select f(,1)",
    "select f(distinct)",
    "select f(*,1)",
    "select f(1) filter",
    "select f(1) filter (",
    "select f(1) filter (where",
    "select f(1) filter (where 1",
    "select f(1) filter (1)",
    "select f(1) over",
    "select f(1) over (",
    "select f(1) over (partition",
    "select f(1) over (partition by",
    "select f(1) over (order",
    "select f(1) over (order by",
    "select f(1) over (rows",
    "select f(1) over (rows between",
    "select f(1) over (rows between 1",
    "select f(1) over (rows between 1 preceding",
    "select f(1) over (rows between 1 preceding and",
    "select f(1) over (rows unbounded",
    "select f(1) over (rows unbounded following)",
    "select f(1) over (rows 1 following)",
    "select f(1) over (rows between current row and 1 preceding)",
    "select f(1) over (rows between 1 following and current row)",
    "select f(1) over (rows between 1 following and 1 preceding)",
    "select f(1) over (rows between unbounded following and current row)",
    "select f(1) over (rows between current row and unbounded preceding)",
    "select f(1) over (rows current)",
    "select f(1) over (rows current row exclude)",
    "select f(1) over (rows current row exclude no)",
    "select f(1) over (rows current row exclude current)",
    "select f(1) over (rows current row exclude foo)",
    "select f(1) over w window",
    "select f(1) over w window w",
    "select f(1) over w window w as",
    "select f(1) over w window w as (",
    "select 1 window w as ()",
    "select raise(ignore)",
    "select raise(",
    "select raise(abort)",
    "select raise(abort,",
    "select raise(foo, 'x')",
    "select raise(ignore, 'x')",
    "select current_date()",
    "select 1 from t1 left",
    "select * from t1 where a = 1 and",
    "select * from t1 where a = 1 or",
    "select * from t1 where not",
    "select * from t1 where (a = 1",
    "select * from t1 where a in (select",
    "values",
    "values (",
    "values (1",
    "values (1),",
    "values ()",
    "values 1",
    "values (1) order by 1",
    "select 1 union values(2) order by 1",
    "select 1 union",
    "select 1 union all",
    "select 1 intersect",
    "select 1 except",
    "select 1 union select",
    "with",
    "with x",
    "with x as",
    "with x as (",
    "with x as (select 1",
    "with x as (select 1)",
    "with x as (select 1) select",
    "with recursive",
    "with x(a as (select 1) select 1",
    "with x not as (select 1) select 1",
    "with x as not (select 1) select 1",
    "with x as materialized select 1",
    "with x as (select 1), select 1",
    "insert",
    "insert into",
    "insert into t1",
    "insert into t1 values",
    "insert into t1 values (",
    "insert into t1 values (1",
    "insert into t1 values (1),",
    "insert into t1 (",
    "insert into t1 (a",
    "insert into t1 (a) ",
    "insert into t1 default",
    "insert into t1 default values values",
    "insert t1 values (1)",
    "insert or into t1 values(1)",
    "insert or foo into t1 values(1)",
    "insert into t1 values(1) on",
    "insert into t1 values(1) on conflict",
    "insert into t1 values(1) on conflict do",
    "insert into t1 values(1) on conflict do update",
    "insert into t1 values(1) on conflict do update set",
    "insert into t1 values(1) on conflict do update set a",
    "insert into t1 values(1) on conflict do update set a =",
    "insert into t1 values(1) on conflict (a",
    "insert into t1 values(1) on conflict (a) do",
    "insert into t1 values(1) on conflict do nothing on conflict do nothing",
    "insert into t1 values(1) returning",
    "insert into t1 values(1) returning a,",
    "replace t1 values(1)",
    "replace into",
    "update",
    "update t1",
    "update t1 set",
    "update t1 set a",
    "update t1 set a =",
    "update t1 set a = 1,",
    "update t1 set a = 1 where",
    "update t1 set a = 1 from",
    "update t1 set (a",
    "update t1 set (a,b",
    "update t1 set (a,b) =",
    "update t1 set a = 1 limit",
    "update t1 set a = 1 order",
    "update t1 set a = 1 order by",
    "update or foo t1 set a = 1",
    "update t1 as set a = 1",
    "update t1 indexed set a = 1",
    "delete",
    "delete t1",
    "delete from",
    "delete from t1 where",
    "delete from t1 returning",
    "delete from t1 limit",
    "delete from t1 order by",
    "create",
    "create foo",
    "create table",
    "create table t",
    "create table t(",
    "create table t()",
    "create table t(a",
    "create table t(a,",
    "create table t(a int,)",
    "create table t(a int primary)",
    "create table t(a int primary key asc desc)",
    "create table t(a int not)",
    "create table t(a int not foo)",
    "create table t(a int default)",
    "create table t(a int default -)",
    "create table t(a int default - x)",
    "create table t(a int default (1)",
    "create table t(a int check)",
    "create table t(a int check 1)",
    "create table t(a int check (1)",
    "create table t(a int references)",
    "create table t(a int references u(",
    "create table t(a int references u on)",
    "create table t(a int references u on delete)",
    "create table t(a int references u on delete set)",
    "create table t(a int references u on delete foo)",
    "create table t(a int references u on delete no)",
    "create table t(a int references u deferrable initially)",
    "create table t(a int references u deferrable initially foo)",
    "create table t(a int collate)",
    "create table t(a int generated)",
    "create table t(a int generated always)",
    "create table t(a int generated always as)",
    "create table t(a int generated always as 1)",
    "create table t(a int generated always as (1) foo)",
    "create table t(a int as (1) stored virtual)",
    "create table t(a int unique on)",
    "create table t(a int unique on conflict)",
    "create table t(a int unique on conflict foo)",
    "create table t(a int primary key on conflict abort autoincrement autoincrement)",
    "create table t(a varchar(10)",
    "create table t(a varchar(10,)",
    "create table t(a varchar(x))",
    "create table t(a varchar(10) key)",
    "create table t(a, primary key)",
    "create table t(a, primary key ()",
    "create table t(a, primary key (a)",
    "create table t(a, unique)",
    "create table t(a, check)",
    "create table t(a, foreign)",
    "create table t(a, foreign key)",
    "create table t(a, foreign key (a))",
    "create table t(a, foreign key (a) references)",
    "create table t(a, constraint)",
    "create table t(a, constraint c)",
    "create table t(a, constraint c foo)",
    "create table t(primary key(a))",
    "create table t(a) as",
    "create table t as",
    "create table t as select",
    "create table if t(a)",
    "create table if not t(a)",
    "create temp",
    "create temp table",
    "create temporary view",
    "create temp index i on t1(a)",
    "create unique",
    "create unique table t(a)",
    "create index",
    "create index i",
    "create index i on",
    "create index i on t1",
    "create index i on t1(",
    "create index i on t1()",
    "create index i on t1(a",
    "create index i on t1(a) where",
    "create index if exists i on t1(a)",
    "create view",
    "create view v",
    "create view v as",
    "create view v(a as select 1",
    "create view v select 1",
    "create trigger",
    "create trigger r",
    "create trigger r on t1",
    "create trigger r after on t1",
    "create trigger r after insert",
    "create trigger r after insert on",
    "create trigger r after insert on t1",
    "create trigger r after insert on t1 begin",
    "create trigger r after insert on t1 begin end",
    "create trigger r after insert on t1 begin select 1",
    "create trigger r after insert on t1 begin select 1; ",
    "create trigger r after insert on t1 begin select 1 end",
    "create trigger r after insert on t1 for begin select 1; end",
    "create trigger r after insert on t1 for each begin select 1; end",
    "create trigger r after insert on t1 when begin select 1; end",
    "create trigger r instead insert on t1 begin select 1; end",
    "create trigger r after update of on t1 begin select 1; end",
    "create trigger r after insert on t1 begin insert into main.t2 values(1); end",
    "create trigger r after insert on t1 begin delete from main.t2; end",
    "create trigger r after insert on t1 begin update main.t2 set a=1; end",
    "create trigger r after insert on t1 begin delete from t2 indexed by i; end",
    "create trigger r after insert on t1 begin update t2 not indexed set a=1; end",
    "create trigger r after insert on t1 begin create table x(a); end",
    "create trigger r after insert on t1 begin begin; end",
    "create virtual",
    "create virtual table",
    "create virtual table v",
    "create virtual table v using",
    "create virtual table v using m(",
    "create virtual table v using m(a, (b)",
    "drop",
    "drop table",
    "drop table if",
    "drop table if not exists t",
    "drop foo t",
    "drop index if exists",
    "drop view .v",
    "drop trigger",
    "alter",
    "alter table",
    "alter table t1",
    "alter table t1 rename",
    "alter table t1 rename to",
    "alter table t1 rename column",
    "alter table t1 rename column a",
    "alter table t1 rename column a to",
    "alter table t1 rename a b",
    "alter table t1 add",
    "alter table t1 add column",
    "alter table t1 drop",
    "alter table t1 drop column",
    "alter table t1 foo",
    "alter t1 rename to t2",
    "begin foo",
    "begin transaction transaction",
    "begin deferred immediate",
    "commit foo",
    "commit transaction transaction",
    "end foo",
    "rollback to",
    "rollback to savepoint",
    "rollback foo",
    "savepoint",
    "release",
    "release savepoint",
    "pragma",
    "pragma foo =",
    "pragma foo(",
    "pragma foo(1",
    "pragma foo = -",
    "pragma foo = - x",
    "pragma foo = (1)",
    "pragma a.b.c",
    "pragma foo = 1 2",
    "attach",
    "attach 'x'",
    "attach 'x' as",
    "attach database",
    "detach",
    "vacuum into",
    "vacuum x y",
    "analyze a.",
    "analyze a.b.c",
    "reindex a.",
    "explain",
    "explain query",
    "explain query plan",
    "explain query select 1",
    "explain plan select 1",
    "select 1 select 2",
    "select 1 from t1 t2 t3",
    "select a.* from",
    "select *.a from t1",
    "select t1.* as x from t1",
    "select * as x from t1",
    "select (select 1, 2",
    "select 1 where 1 2",
    "select count(distinct *) from t1",
    "select * from t1 where a like 'x' escape",
    "select * from t1 where a is not distinct",
    "select * from t1 group by a having",
    "select * from t1 window w as (partition by a) order",
    "select 1;;select",
    "select 1 = = 2",
    "select 1 < < 2",
    "select 1 ! 2",
    "select 1 !== 2",
    "select 1 <=> 2",
    "select 1 === 2",
    "select 1 & & 2",
    "select 1 || || 2",
    "select 1 . 2",
    "select t1. from t1",
    "select t1.a. from t1",
    "select ?1a",
    "select :1",
    "select @@",
    "select $$",
    "select 'a' 'b'",
    "select x'41' x'42'",
    "select \"a\" \"b\" from t1",
    "select 1 from t1 where a = 'x",
    "select /* unterminated",
    "select -- only comment",
    "select 1 -",
    "select 1 * / 2",
    "select 1 / * 2",
    "select 1 % % 2",
    "select (1,2",
    "select (1,2,)",
    "select in (1)",
    "select 1 in 1",
    "select 1 in ()x",
    "select 1 + (select)",
    "select 1 + (values)",
    "select 1 + (with)",
    "select +",
    "select 1 not null null",
    "select 1 isnull null",
    "select f() over ()",
    "select * from t1 where exists ()",
    "select * from t1 left join t2",
    "select * from t1 join t2 on 1 on 2",
    "select * from t1 join t2 using (a) on 1",
    "select * from t1 cross join",
    "select * from t1 natural",
    "select * from t1 natural join",
    "select * from t1 left outer",
    "select * from t1 full outer outer join t2",
    "select a from t1 order by a asc desc",
    "select a from t1 order by a nulls",
    "select a from t1 order by a nulls middle",
    "select a from t1 order by a collate",
    "select a from t1 limit 1 offset 2 offset 3",
    "select a from t1 limit 1, 2, 3",
    "select a from t1 limit 1 offset 2,3",
};

static const char *const good_sql[] = {
    "SELECT a, b AS x, t1.c FROM t1 WHERE a > 1 AND b < 2 OR c = 3 ORDER BY a DESC, b LIMIT 10 "
    "OFFSET 2",
    "SELECT DISTINCT a FROM t1 JOIN t2 ON t1.a = t2.a LEFT JOIN t3 ON t3.x = t1.b WHERE t2.b IS "
    "NOT NULL",
    "SELECT count(*), sum(b) FILTER (WHERE b > 0), max(c) FROM t1 GROUP BY a HAVING count(*) > 1",
    "SELECT a, row_number() OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT "
    "ROW) FROM t1",
    "SELECT a, sum(b) OVER w FROM t1 WINDOW w AS (ORDER BY a RANGE BETWEEN UNBOUNDED PRECEDING AND "
    "UNBOUNDED FOLLOWING EXCLUDE TIES)",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c",
    "WITH q AS MATERIALIZED (SELECT a FROM t1), r AS NOT MATERIALIZED (SELECT b FROM t2) SELECT * "
    "FROM q, r",
    "SELECT * FROM t1 WHERE a IN (1, 2, 3) AND b NOT IN (SELECT a FROM t2) AND c IN t3",
    "SELECT CASE WHEN a = 1 THEN 'one' WHEN a = 2 THEN 'two' ELSE 'many' END FROM t1",
    "SELECT CASE a WHEN 1 THEN b ELSE c END, CAST(a AS TEXT), b COLLATE NOCASE FROM t1",
    "SELECT a FROM t1 WHERE b BETWEEN 1 AND 5 AND c NOT BETWEEN 2 AND 3",
    "SELECT a FROM t1 WHERE b LIKE 'x%' ESCAPE '\\' OR c GLOB '*y' OR a NOT LIKE 'z'",
    "SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.a = t1.a) AND NOT EXISTS (SELECT 2)",
    "SELECT (SELECT max(a) FROM t2), (a, b) = (1, 2) FROM t1",
    "SELECT a FROM t1 UNION SELECT a FROM t2 INTERSECT SELECT x FROM t3 EXCEPT SELECT 1 ORDER BY 1 "
    "LIMIT 5",
    "SELECT * FROM t1 NATURAL JOIN t2 CROSS JOIN t3",
    "SELECT * FROM t1 AS p INDEXED BY i, t2 NOT INDEXED WHERE p.a = t2.a",
    "SELECT * FROM (SELECT a FROM t1) AS s JOIN t2 USING (a)",
    "SELECT * FROM json_each('[1,2]') AS j WHERE j.value > 1",
    "SELECT a || b, a -> 'x', a ->> '$.y', -a, +b, ~c, NOT a FROM t1",
    "SELECT a & b | c << 1 >> 2, a % 3, a / 2 * 3 FROM t1",
    "SELECT a ISNULL, b NOTNULL, c NOT NULL, a IS b, a IS NOT b, a IS DISTINCT FROM b FROM t1",
    "VALUES (1, 2), (3, 4)",
    "SELECT ?, ?1, :a, @b, $c FROM t1",
    "SELECT x'AB', 1.5e3, 0x1F, 'it''s', NULL, CURRENT_TIMESTAMP",
    "INSERT INTO t1 VALUES (1, 2, 3), (4, 5, 6)",
    "INSERT INTO t1 (a, b) SELECT a, b FROM t2 WHERE true",
    "INSERT OR REPLACE INTO t1 DEFAULT VALUES",
    "REPLACE INTO t1 (a) VALUES (1)",
    "INSERT INTO t1 (a) VALUES (1) ON CONFLICT (a) WHERE a > 0 DO UPDATE SET b = excluded.b WHERE "
    "b < 5 ON CONFLICT DO NOTHING",
    "INSERT INTO t1 VALUES (1, 2, 3) RETURNING a, b AS bee, *",
    "WITH w AS (SELECT 1) INSERT INTO t1 (a) SELECT * FROM w",
    "UPDATE t1 SET a = 1, b = b + 1 WHERE c = 3",
    "UPDATE OR IGNORE t1 SET (a, b) = (1, 2) FROM t2 WHERE t1.c = t2.c RETURNING a",
    "UPDATE t1 SET a = 1 ORDER BY b LIMIT 1",
    "DELETE FROM t1 WHERE a = 1 RETURNING *",
    "DELETE FROM t1 ORDER BY a LIMIT 2 OFFSET 1",
    "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b VARCHAR(10) NOT NULL DEFAULT 'x', c "
    "REAL CHECK (c > 0), d TEXT UNIQUE COLLATE NOCASE)",
    "CREATE TABLE IF NOT EXISTS main.t(a INT, b INT, PRIMARY KEY (a, b), UNIQUE (b) ON CONFLICT "
    "IGNORE, FOREIGN KEY (a) REFERENCES t1 (a) ON DELETE CASCADE ON UPDATE SET NULL DEFERRABLE "
    "INITIALLY DEFERRED) WITHOUT ROWID",
    "CREATE TEMP TABLE t(a DOUBLE PRECISION, b UNSIGNED BIG INT DEFAULT -1, c AS (a * 2) STORED, d "
    "GENERATED ALWAYS AS (a + 1) VIRTUAL) STRICT",
    "CREATE TABLE t AS SELECT * FROM t1",
    "CREATE UNIQUE INDEX IF NOT EXISTS i2 ON t1 (a COLLATE NOCASE DESC, b + c) WHERE a > 0",
    "CREATE VIEW v(x, y) AS SELECT a, b FROM t1",
    "CREATE TRIGGER tr AFTER UPDATE OF a, b ON t1 FOR EACH ROW WHEN new.a > 1 BEGIN INSERT INTO t2 "
    "VALUES (new.a, 1, 2, 3); DELETE FROM t3 WHERE x = old.a; END",
    "CREATE TRIGGER tr BEFORE DELETE ON t1 BEGIN SELECT RAISE(ABORT, 'no'); UPDATE t2 SET a = 1; "
    "END",
    "CREATE TRIGGER tr INSTEAD OF INSERT ON v1 BEGIN SELECT RAISE(IGNORE); END",
    "CREATE VIRTUAL TABLE vt USING fts5(a, b, tokenize = 'porter')",
    "DROP TABLE IF EXISTS t1",
    "DROP INDEX i",
    "DROP VIEW v1",
    "DROP TRIGGER IF EXISTS main.tr",
    "ALTER TABLE t1 RENAME TO t9",
    "ALTER TABLE t1 RENAME COLUMN a TO z",
    "ALTER TABLE t1 ADD COLUMN d INT DEFAULT 0",
    "ALTER TABLE t1 DROP COLUMN c",
    "BEGIN IMMEDIATE TRANSACTION",
    "COMMIT",
    "ROLLBACK TO SAVEPOINT sp",
    "SAVEPOINT sp",
    "RELEASE sp",
    "PRAGMA main.cache_size = -2000",
    "PRAGMA table_info(t1)",
    "ATTACH DATABASE ':memory:' AS aux",
    "DETACH aux",
    "VACUUM",
    "ANALYZE t1",
    "REINDEX t1",
    "EXPLAIN QUERY PLAN SELECT * FROM t1 WHERE a = 1",
    "EXPLAIN SELECT 1",
    "SELECT a FROM t1 WHERE a = (SELECT max(a) FROM t2 WHERE t2.b = t1.b) ORDER BY a COLLATE "
    "NOCASE ASC NULLS LAST",
    "SELECT t1.*, t2.d FROM t1 LEFT OUTER JOIN t2 ON t1.a = t2.a AND t2.b > 0 RIGHT JOIN t3 ON "
    "t3.x = t2.c",
    "SELECT * FROM t1 FULL JOIN t2 USING (a, b) WHERE coalesce(t1.c, t2.c) IS NULL",
    "SELECT * FROM (t1 JOIN t2 ON t1.a = t2.a) AS j, t3",
    "SELECT x, y FROM t3 WHERE x NOT IN (1) AND y IS NOT NULL LIMIT -1 OFFSET 0",
    "SELECT group_concat(DISTINCT a), total(b), avg(c) FILTER (WHERE c NOT NULL) FROM t1",
    "SELECT a, lag(b, 1, 0) OVER (ORDER BY a GROUPS CURRENT ROW), first_value(c) OVER (w ROWS "
    "UNBOUNDED PRECEDING) FROM t1 WINDOW w AS (PARTITION BY b)",
    "SELECT ntile(2) OVER win, rank() OVER (win RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE "
    "CURRENT ROW) FROM t1 WINDOW win AS (ORDER BY a), w2 AS (win)",
    "SELECT CASE WHEN a IS NULL THEN 0 WHEN a BETWEEN 1 AND 2 THEN 1 END AS k, count(*) FROM t1 "
    "GROUP BY k HAVING k > 0 ORDER BY 2 DESC",
    "SELECT a FROM t1 WHERE b IN (SELECT a FROM t2 UNION SELECT x FROM t3) AND c NOT IN ()",
    "SELECT 1 WHERE EXISTS (WITH w AS (SELECT 1) SELECT * FROM w)",
    "SELECT * FROM t1 WHERE (a, b) IN (SELECT a, b FROM t2) AND (a, b) > (1, 2)",
    "SELECT printf('%d', a), substr(b, 1, 2), b GLOB '*x*', c REGEXP 'y' FROM t1",
    "SELECT * FROM t1 AS x INDEXED BY i WHERE x.a = 1 UNION ALL SELECT * FROM t1 NOT INDEXED",
    "SELECT * FROM generate_series(1, 10) AS g, json_tree('{}')",
    "SELECT \"a\", [b], `c`, 'lit', \"no such\" FROM t1",
    "SELECT a AS \"x y\", b \"z\", c 'w' FROM t1",
    "SELECT key, value, action, first, last, replace, temp, row, rows, range, filter, over, window "
    "FROM t1",
    "SELECT t1.a FROM t1, t2 WHERE t1.a = t2.a AND t2.b LIKE 'a_%' ESCAPE '_' AND t1.c <> t2.c",
    "WITH a(x) AS (VALUES (1), (2)), b AS (SELECT x * 2 AS y FROM a) SELECT * FROM a JOIN b ON x = "
    "y / 2",
    "VALUES (1, 'a'), (2, 'b') UNION ALL SELECT 3, 'c'",
    "SELECT CAST(a AS INTEGER), CAST(b AS REAL), CAST(c AS BLOB), CAST('1' AS NUMERIC), CAST(1 AS) "
    "FROM t1",
    "SELECT a -> '$.b' ->> 'c', json_extract(b, '$[0]') FROM t1",
    "SELECT likely(a), unlikely(b), iif(a, b, c), nullif(a, b) FROM t1",
    "SELECT DISTINCT ON_x FROM (SELECT 1 AS ON_x)",
    "INSERT INTO t1 SELECT * FROM t2 WHERE 1 ON CONFLICT DO NOTHING",
    "INSERT INTO t1 (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET (b, c) = (excluded.b, excluded.c)",
    "INSERT OR ABORT INTO t1 VALUES (1, 2, 3)",
    "INSERT OR FAIL INTO main.t1 AS z (a, b, c) VALUES (1, 2, 3) RETURNING z.a + 1 AS q",
    "UPDATE t1 SET a = CASE WHEN b > 0 THEN 1 ELSE 2 END, c = (SELECT max(x) FROM t3) WHERE a IN "
    "(1, 2)",
    "UPDATE OR ROLLBACK main.t1 AS q NOT INDEXED SET a = q.b WHERE q.c = 1 RETURNING *",
    "WITH d AS (SELECT a FROM t2) DELETE FROM t1 WHERE a IN d",
    "DELETE FROM main.t1 AS x INDEXED BY i WHERE x.a > 0 RETURNING x.a",
    "CREATE TABLE t(x INTEGER NOT NULL ON CONFLICT REPLACE UNIQUE ON CONFLICT ROLLBACK, y DEFAULT "
    "CURRENT_TIMESTAMP, z DEFAULT (1 + 2) REFERENCES t1 MATCH SIMPLE)",
    "CREATE TABLE t(a TEXT CONSTRAINT c1 PRIMARY KEY CONSTRAINT c2 COLLATE BINARY, b BLOB DEFAULT "
    "x'00', c NUMERIC DEFAULT +1.5, d DEFAULT 'it''s', e DEFAULT NULL, f DEFAULT TRUE)",
    "CREATE TABLE t(a, b, CONSTRAINT pk PRIMARY KEY (a DESC, b COLLATE NOCASE) ON CONFLICT ABORT "
    "CONSTRAINT ck CHECK (a <> b) FOREIGN KEY (b) REFERENCES t2 (a) NOT DEFERRABLE INITIALLY "
    "IMMEDIATE)",
    "CREATE TABLE t(\"a b\" [INT], 'c' VARCHAR(1, 2), d INT(+3), e DECIMAL(-1))",
    "CREATE TABLE t(a INT PRIMARY KEY, b) WITHOUT ROWID, STRICT",
    "CREATE TEMPORARY TABLE IF NOT EXISTS temp.t AS WITH w AS (SELECT 1 AS x) SELECT * FROM w",
    "CREATE INDEX i2 ON t1 (a) WHERE b IS NOT NULL AND c > 0",
    "CREATE INDEX IF NOT EXISTS main.i3 ON t1 (a ASC, b DESC, c COLLATE RTRIM)",
    "CREATE TEMP VIEW IF NOT EXISTS v2 AS SELECT a FROM t1 UNION SELECT x FROM t3",
    "CREATE TRIGGER IF NOT EXISTS main.tr2 BEFORE INSERT ON t1 WHEN new.a IS NULL BEGIN SELECT "
    "RAISE(FAIL, 'null a'); END",
    "CREATE TEMP TRIGGER tr3 AFTER DELETE ON t1 FOR EACH ROW BEGIN INSERT OR REPLACE INTO t2 (a) "
    "SELECT old.a; UPDATE t3 SET x = x + 1 WHERE y = old.b; DELETE FROM t2 WHERE a = old.a; END",
    "CREATE TRIGGER tr4 UPDATE ON t1 BEGIN INSERT INTO t3 VALUES (1, 2) ON CONFLICT DO NOTHING; "
    "WITH w AS (SELECT 1) SELECT * FROM w; END",
    "CREATE VIRTUAL TABLE IF NOT EXISTS main.vt USING rtree(id, minx, maxx)",
    "CREATE VIRTUAL TABLE vt2 USING mod",
    "DROP INDEX IF EXISTS main.i",
    "DROP VIEW IF EXISTS v1",
    "ALTER TABLE main.t1 RENAME TO t9",
    "ALTER TABLE t1 RENAME a TO z",
    "ALTER TABLE t1 ADD d TEXT NOT NULL DEFAULT '' CHECK (length(d) < 10)",
    "ALTER TABLE t1 DROP c",
    "BEGIN",
    "BEGIN DEFERRED",
    "BEGIN EXCLUSIVE TRANSACTION",
    "COMMIT TRANSACTION",
    "END",
    "ROLLBACK",
    "ROLLBACK TRANSACTION",
    "ROLLBACK TO sp",
    "RELEASE SAVEPOINT sp",
    "PRAGMA foreign_keys = ON",
    "PRAGMA journal_mode = 'wal'",
    "PRAGMA main.page_size",
    "PRAGMA user_version = -1",
    "PRAGMA integrity_check(10)",
    "PRAGMA table_info('t1')",
    "PRAGMA encoding = \"UTF-8\"",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA auto_vacuum = DELETE",
    "PRAGMA secure_delete = DEFAULT",
    "ATTACH 'file.db' AS aux KEY 'secret'",
    "ATTACH DATABASE 'x' || '.db' AS 'aux2'",
    "DETACH DATABASE aux",
    "VACUUM main",
    "VACUUM INTO 'backup.db'",
    "ANALYZE",
    "ANALYZE main.t1",
    "REINDEX main.i",
    "REINDEX nocase",
    "EXPLAIN INSERT INTO t1 VALUES (1, 2, 3)",
    "EXPLAIN QUERY PLAN WITH w AS (SELECT 1) SELECT * FROM w",
    "SELECT ?1 + ?2, :name || @other, $tcl::var(idx)",
    "SELECT 0x7FFFFFFFFFFFFFFF, 1e308, .5, 5., 1E-7, X'', x'DEADBEEF'",
    "SELECT -9223372036854775808, - - 1, +'x', ~0, NOT NOT 1",
    "SELECT a, count(*) FILTER (WHERE b > 0) OVER (PARTITION BY c ORDER BY a GROUPS BETWEEN 2 "
    "PRECEDING AND 1 FOLLOWING EXCLUDE GROUP) AS w FROM t1",
    "SELECT sum(a) OVER (ORDER BY b RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE "
    "CURRENT ROW), avg(b) OVER () FROM t1",
    "SELECT * FROM t1 JOIN (t2 JOIN t3 ON t2.a = t3.x) USING (a) LEFT JOIN (SELECT 1 AS z) AS q ON "
    "q.z = t1.a",
    "WITH RECURSIVE r(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM r WHERE n < 5), s AS (SELECT n "
    "FROM r) INSERT INTO t1 (a) SELECT n FROM s WHERE true ON CONFLICT (a) WHERE a > 0 DO UPDATE "
    "SET b = excluded.b, c = c + 1 WHERE b <> excluded.b ON CONFLICT DO NOTHING RETURNING *",
    "UPDATE t1 INDEXED BY i SET (a, b) = (SELECT a, b FROM t2 LIMIT 1), c = NULL WHERE rowid = 1 "
    "RETURNING a AS x, b",
    "DELETE FROM t1 NOT INDEXED WHERE a IN (SELECT a FROM t2 EXCEPT SELECT x FROM t3) RETURNING a",
    "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY ASC ON CONFLICT ROLLBACK AUTOINCREMENT, "
    "name TEXT NOT NULL COLLATE NOCASE UNIQUE ON CONFLICT FAIL, parent INTEGER REFERENCES t(id) ON "
    "DELETE SET DEFAULT ON UPDATE NO ACTION DEFERRABLE INITIALLY DEFERRED, ts DEFAULT "
    "CURRENT_DATE, CHECK (id > 0), UNIQUE (name, parent))",
    "CREATE TABLE t(a INTEGER, b TEXT GENERATED ALWAYS AS (upper(a)) STORED, c INT AS (a + 1), "
    "CONSTRAINT f FOREIGN KEY (a, b) REFERENCES t2 (a, b) MATCH FULL ON DELETE RESTRICT)",
    "CREATE TRIGGER IF NOT EXISTS tt BEFORE UPDATE OF a ON t1 FOR EACH ROW WHEN old.a <> new.a AND "
    "new.b IS NOT NULL BEGIN UPDATE OR IGNORE t2 SET b = new.b, (c, d) = (1, 2) WHERE a = old.a; "
    "INSERT OR ROLLBACK INTO t3 (x, y) VALUES (new.a, old.a); SELECT CASE WHEN new.a < 0 THEN "
    "RAISE(ROLLBACK, 'negative') END; END",
    "CREATE VIEW IF NOT EXISTS main.vv (p, q) AS WITH w AS (SELECT a, b FROM t1) SELECT * FROM w "
    "WHERE a NOT IN (1, 2) ORDER BY 1 LIMIT 10",
    "SELECT a FROM t1 WHERE a = ? AND b = ?5 AND c = :x AND a = @y AND b = $z ORDER BY a LIMIT ?, "
    "?",
    "SELECT CAST(a AS DOUBLE PRECISION) || 'x' COLLATE BINARY, b IS NOT DISTINCT FROM c, a ->> '$' "
    "-> '$.x' FROM t1 GROUP BY 1, 2 HAVING max(a) > 0 AND min(b) < 10",
    "SELECT (SELECT count(*) FROM t2 WHERE t2.a = t1.a) AS n, EXISTS (VALUES (1)), (1, 2) IN "
    "(VALUES (1, 2)) FROM t1",
    "REPLACE INTO main.t1 (a, b, c) VALUES (1, 2, 3), (4, 5, 6) RETURNING a",
    "INSERT INTO t1 DEFAULT VALUES RETURNING a + b AS s, *",
    "PRAGMA main.wal_checkpoint(TRUNCATE)",
    "PRAGMA foreign_key_check(t1)",
    "VACUUM main INTO 'file.db'",
    "ALTER TABLE main.t1 ADD COLUMN e INTEGER REFERENCES t2 (a) DEFAULT NULL",
    "SELECT DISTINCT t1.a, t2.* FROM t1 CROSS JOIN t2 NATURAL LEFT OUTER JOIN t3 WHERE t1.a "
    "BETWEEN t2.a - 1 AND t2.a + 1 ORDER BY t1.a DESC NULLS FIRST, 2 ASC NULLS LAST",
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static sqlite3 *ref_open(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return NULL;
  sqlite3_exec(db, schema, NULL, NULL, NULL);
  return db;
}

/* Reference outcome: 0 = prepared, 1 = parse-class error (msg copied), 2 = other error */
static int ref_prepare(sqlite3 *db, const char *sql, int n, char *msg, size_t cap) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, n, &st, NULL);
  sqlite3_finalize(st);
  if (rc == SQLITE_OK) return 0;
  snprintf(msg, cap, "%s", sqlite3_errmsg(db));
  return parse_class(msg) ? 1 : 2;
}

/* Ours: SHALE_OK (msg = "") or the error (msg = message). */
static int our_parse(const char *sql, int n, char *msg, size_t cap) {
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *s = NULL;
  const char *tail = NULL;
  char *err = NULL;
  int rc = sql_parse(&a, sql, n, &s, &tail, &err);
  snprintf(msg, cap, "%s", rc ? (err ? err : "(no message)") : "");
  shale_free(err);
  util_arena_free(&a);
  return rc;
}

/* Both accept sql: do they number its parameters alike (count and names)? */
static int params_match(sqlite3 *db, const char *sql, int n, char *why, size_t cap) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, n, &st, NULL) != SQLITE_OK || !st) return 1;
  UtilArena a;
  util_arena_init(&a, 0);
  SqlStmt *s = NULL;
  char *err = NULL;
  int ok = 1;
  if (sql_parse(&a, sql, n, &s, NULL, &err) == SHALE_OK && s) {
    int cnt = sqlite3_bind_parameter_count(st);
    if (cnt != s->nvar) {
      snprintf(why, cap, "parameter count %d, reference %d", s->nvar, cnt);
      ok = 0;
    }
    for (int i = 1; ok && i <= cnt; i++) {
      const char *rn = sqlite3_bind_parameter_name(st, i), *on = NULL;
      for (int k = 0; k < s->nvar_names; k++)
        if (s->var_names[k].num == i) on = s->var_names[k].name;
      if ((rn == NULL) != (on == NULL) || (rn && strcmp(rn, on))) {
        snprintf(why, cap, "parameter %d named %s, reference %s", i, on ? on : "-", rn ? rn : "-");
        ok = 0;
      }
    }
  }
  shale_free(err);
  util_arena_free(&a);
  sqlite3_finalize(st);
  return ok;
}

static int compare(sqlite3 *db, const char *sql, int n, int *nparse, int *nok, int report) {
  char rmsg[512], omsg[512];
  int r = ref_prepare(db, sql, n, rmsg, sizeof rmsg);
  int o = our_parse(sql, n, omsg, sizeof omsg);
  if (r == 0) {
    (*nok)++;
    char why[128];
    if (o == SHALE_OK && !params_match(db, sql, n, why, sizeof why)) {
      if (report) test_fail(__FILE__, __LINE__, "%s: %.*s", why, n < 0 ? (int)strlen(sql) : n, sql);
      return 1;
    }
    if (o != SHALE_OK) {
      if (report)
        test_fail(__FILE__, __LINE__, "reference accepts, we say \"%s\": %.*s", omsg, n, sql);
      return 1;
    }
  } else if (r == 1 && !strcmp(rmsg, "near \"ORDER\": syntax error") &&
             memchr(sql, '(', (size_t)(n < 0 ? (int)strlen(sql) : n))) {
    /* ORDER BY inside a function call is accepted here on purpose (newer
     * than 3.40): not compared */
  } else if (r == 1 && o == SHALE_OK && strstr(rmsg, " columns assigned ")) {
    /* SQLite checks (a, b) = (SELECT ...) only after parsing: not compared */
  } else if (r == 1) {
    (*nparse)++;
    if (o == SHALE_OK || strcmp(rmsg, omsg)) {
      if (report)
        test_fail(__FILE__, __LINE__, "%.*s\n      reference: %s\n      ours:      %s", n, sql,
                  rmsg, o == SHALE_OK ? "(parsed)" : omsg);
      return 1;
    }
  }
  return 0;
}

TEST(error_corpus_matches_reference) {
  sqlite3 *db = ref_open();
  CHECK(db != NULL);
  int nparse = 0, nok = 0, bad = 0;
  for (int i = 0; i < N(bad_sql); i++) {
    char rmsg[512];
    if (ref_prepare(db, bad_sql[i], -1, rmsg, sizeof rmsg) != 1) continue; /* not a parse error */
    bad += compare(db, bad_sql[i], -1, &nparse, &nok, 1);
  }
  printf("  %d corpus statements fail in the reference parser; %d differ\n", nparse, bad);
  CHECK(nparse >= 300);
  sqlite3_close(db);
}

TEST(good_statements_parse) {
  sqlite3 *db = ref_open();
  int nparse = 0, nok = 0;
  for (int i = 0; i < N(good_sql); i++) {
    char omsg[512];
    if (our_parse(good_sql[i], -1, omsg, sizeof omsg) != SHALE_OK)
      test_fail(__FILE__, __LINE__, "%s: %s", good_sql[i], omsg);
    compare(db, good_sql[i], -1, &nparse, &nok, 1);
  }
  CHECK_EQ(nparse, 0);
  sqlite3_close(db);
}

/* Newer than 3.40 and accepted here on purpose: ORDER BY inside an aggregate. */
TEST(aggregate_order_by_accepted) {
  char omsg[256];
  CHECK_OK(our_parse("SELECT group_concat(a, ',' ORDER BY b DESC) FROM t1", -1, omsg, sizeof omsg));
}

/* ---- mutations ---- */

typedef struct Tok {
  int start, len;
} Tok;

static int tokens_of(const char *z, Tok *t, int max) {
  int n = (int)strlen(z), nt = 0, off = 0;
  while (off < n && nt < max) {
    int type;
    int len = sql_token(z + off, n - off, &type);
    if (type != TK_SPACE) {
      t[nt].start = off;
      t[nt].len = len;
      nt++;
    }
    off += len;
  }
  return nt;
}

/* Text of tokens with an edit: the list of token indexes to emit (-1 = the
 * inserted text ins). */
static int build(char *out, int cap, const char *z, const Tok *t, const int *idx, int nidx,
                 const char *ins) {
  int o = 0;
  for (int i = 0; i < nidx; i++) {
    const char *s = idx[i] < 0 ? ins : z + t[idx[i]].start;
    int l = idx[i] < 0 ? (int)strlen(ins) : t[idx[i]].len;
    if (o + l + 2 >= cap) return -1;
    if (o) out[o++] = ' ';
    memcpy(out + o, s, (size_t)l);
    o += l;
  }
  out[o] = 0;
  return o;
}

TEST(mutations_match_reference) {
  static const char *const inserts[] = {
      ")", "(", ",",  "1",    "a", "select", "from", "not",   "and", "'s'", "*",      ";",
      "#", ".", "as", "null", "=", "on",     "join", "where", "by",  "end", "values", "x'0'"};
  sqlite3 *db = ref_open();
  int nparse = 0, nok = 0, bad = 0, total = 0;
  Tok t[256];
  int idx[260];
  char buf[4096];
  for (int g = 0; g < N(good_sql); g++) {
    const char *z = good_sql[g];
    int nt = tokens_of(z, t, 256);
    for (int pos = 0; pos <= nt; pos++) {
      for (int kind = 0; kind < 4 + N(inserts); kind++) {
        int k = 0;
        for (int i = 0; i < nt; i++) {
          if (i == pos) {
            if (kind == 0) continue;       /* delete */
            if (kind == 1) idx[k++] = i;   /* duplicate */
            if (kind == 2 && i + 1 < nt) { /* swap */
              idx[k++] = i + 1;
              idx[k++] = i;
              i++;
              continue;
            }
            if (kind == 3) break;         /* truncate */
            if (kind >= 4) idx[k++] = -1; /* insert */
          }
          idx[k++] = i;
        }
        if (pos == nt && kind != 0 && kind < 4) continue;
        if (pos == nt && kind >= 4) idx[k++] = -1;
        const char *ins = kind >= 4 ? inserts[kind - 4] : "";
        if (build(buf, sizeof buf, z, t, idx, k, ins) < 0) continue;
        total++;
        int d = compare(db, buf, -1, &nparse, &nok, bad < 25);
        bad += d;
      }
    }
  }
  printf("  %d mutants: %d parse errors in the reference, %d accepted; %d differ\n", total, nparse,
         nok, bad);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}

/* Random double edits with any keyword or punctuation as the inserted or
 * replacing token. */
TEST(random_mutations_match_reference) {
  static const char *const punct[] = {"(",     ")",   ",", ".",   ";",    "*",     "=", "-",  "+",
                                      "||",    "->",  "1", "1.5", "'s'",  "x'00'", "?", ":v", "a",
                                      "\"q\"", "[b]", "#", "!",   "x'1'", "0x",    "1e"};
  sqlite3 *db = ref_open();
  uint64_t rs = test_seed() | 1;
  int nparse = 0, nok = 0, bad = 0, total = test_long() ? 300000 : 40000;
  Tok t[256];
  int idx[260];
  char buf[4096];
  for (int m = 0; m < total; m++) {
    const char *z = good_sql[test_rand(&rs) % N(good_sql)];
    int nt = tokens_of(z, t, 256);
    const char *ins;
    if (test_rand(&rs) % 2)
      ins = sql_keyword_at((int)(test_rand(&rs) % (uint64_t)sql_keyword_count()));
    else
      ins = punct[test_rand(&rs) % N(punct)];
    int p1 = (int)(test_rand(&rs) % (uint64_t)(nt + 1));
    int p2 = (int)(test_rand(&rs) % (uint64_t)(nt + 1));
    int op1 = (int)(test_rand(&rs) % 3),
        op2 = (int)(test_rand(&rs) % 3); /* 0 del, 1 ins, 2 replace */
    int k = 0;
    for (int i = 0; i <= nt; i++) {
      int skip = 0;
      if (i == p1) {
        if (op1 >= 1) idx[k++] = -1;
        if (op1 != 1) skip = 1;
      }
      if (i == p2 && i != p1) {
        if (op2 >= 1) idx[k++] = -1;
        if (op2 != 1) skip = 1;
      }
      if (i < nt && !skip) idx[k++] = i;
    }
    if (build(buf, sizeof buf, z, t, idx, k, ins) < 0) continue;
    bad += compare(db, buf, -1, &nparse, &nok, bad < 25);
  }
  printf("  %d random mutants: %d parse errors in the reference, %d accepted; %d differ\n", total,
         nparse, nok, bad);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}

/* Random character soup after SELECT: exercises token boundaries (numbers,
 * quotes, blobs, variables, comments, operators) against the reference. */
TEST(random_lexemes_match_reference) {
  static const char chars[] = "0123456789.eExX+-'\"[]`$:@?#ab_ ()*/|<>=!~&%,;\n\xc3\xa9";
  sqlite3 *db = ref_open();
  uint64_t rs = test_seed() * 7 + 3;
  int nparse = 0, nok = 0, bad = 0, total = test_long() ? 400000 : 50000;
  char buf[64];
  for (int m = 0; m < total; m++) {
    int len = 1 + (int)(test_rand(&rs) % 12);
    int o = snprintf(buf, sizeof buf, "SELECT ");
    for (int i = 0; i < len; i++) buf[o++] = chars[test_rand(&rs) % (sizeof chars - 1)];
    buf[o] = 0;
    bad += compare(db, buf, -1, &nparse, &nok, bad < 25);
  }
  printf("  %d lexeme soups: %d parse errors in the reference, %d accepted; %d differ\n", total,
         nparse, nok, bad);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}

/* Nesting: where SQLite's parser stack overflows, and no crash for absurd
 * depths (the recursive-descent parser must refuse before the C stack ends). */
static char *nest_sql(const char *pre, const char *mid, const char *post, const char *tail, int n) {
  size_t cap = strlen(pre) + (strlen(mid) + strlen(post)) * (size_t)n + strlen(tail) + 16;
  char *z = malloc(cap);
  size_t o = (size_t)snprintf(z, cap, "%s", pre);
  for (int i = 0; i < n; i++) o += (size_t)snprintf(z + o, cap - o, "%s", mid);
  o += (size_t)snprintf(z + o, cap - o, "1");
  for (int i = 0; i < n; i++) o += (size_t)snprintf(z + o, cap - o, "%s", post);
  snprintf(z + o, cap - o, "%s", tail);
  return z;
}

TEST(nesting_limits) {
  static const char *const shapes[][4] = {
      {"SELECT ", "(", ")", ""},
      {"SELECT ", "NOT ", "", ""},
      {"SELECT ", "- ", "", ""},
      {"SELECT ", "abs(", ")", ""},
      {"SELECT ", "CAST(", " AS INT)", ""},
      {"SELECT ", "CASE WHEN ", " THEN 1 END", ""},
      {"SELECT ", "1 IN (", ")", ""},
      {"SELECT ", "(SELECT ", ")", ""},
      {"SELECT ", "EXISTS (SELECT ", ")", ""},
      {"SELECT * FROM ", "(SELECT * FROM ", ")", ""},
  };
  sqlite3 *db = ref_open();
  int nparse = 0, nok = 0, bad = 0;
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    /* find the reference's threshold, then compare around it */
    int lo = 1, hi = 400;
    for (;;) {
      char *z = nest_sql(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3], hi);
      char msg[256];
      int r = ref_prepare(db, z, -1, msg, sizeof msg);
      free(z);
      if (r == 1) break;
      hi *= 2;
      if (hi > 5000) break;
    }
    while (hi - lo > 1) {
      int mid = (lo + hi) / 2;
      char *z = nest_sql(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3], mid);
      char msg[256];
      int r = ref_prepare(db, z, -1, msg, sizeof msg);
      free(z);
      if (r == 1)
        hi = mid;
      else
        lo = mid;
    }
    for (int n = lo - 2; n <= hi + 2; n++) {
      if (n < 1) continue;
      char *z = nest_sql(shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3], n);
      bad += compare(db, z, -1, &nparse, &nok, 1);
      free(z);
    }
  }
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
  /* absurd depths: an error, never a crash */
  static const char *const deep[][3] = {
      {"(", ")", ""},
      {"NOT ", "", ""},
      {"f(", ")", ""},
      {"CAST(", " AS INT)", ""},
      {"CASE WHEN ", " THEN 1 END", ""},
      {"1 BETWEEN ", " AND 1", ""},
      {"(SELECT ", ")", ""},
      {"1 = NOT ", "", ""},
      {"x IN (", ")", ""},
      {"- ~ + ", "", ""},
      {"a LIKE ", " ESCAPE 1", ""},
  };
  for (size_t k = 0; k < sizeof deep / sizeof deep[0]; k++) {
    char *z = nest_sql("SELECT ", deep[k][0], deep[k][1], deep[k][2], 100000);
    char msg[256];
    int rc = our_parse(z, -1, msg, sizeof msg);
    CHECK_RC(rc, SHALE_ERROR);
    if (strcmp(msg, "parser stack overflow") && strncmp(msg, "Expression tree", 15))
      test_fail(__FILE__, __LINE__, "deep %s: %s", deep[k][0], msg);
    free(z);
  }
}

/* A valid statement cut at a random token and continued with random tokens:
 * probes, state by state, which tokens may come next. */
TEST(prefix_continuations_match_reference) {
  static const char *const punct[] = {"(", ")",   ",",     ".", ";", "*",     "=",  "-",   "||",
                                      "1", "'s'", "x'00'", "?", "a", "\"q\"", "t1", "NOT", "NULL"};
  sqlite3 *db = ref_open();
  uint64_t rs = test_seed() * 5 + 11;
  int nparse = 0, nok = 0, bad = 0, total = test_long() ? 300000 : 40000;
  Tok t[256];
  int idx[260];
  char buf[4096];
  for (int m = 0; m < total; m++) {
    const char *z = good_sql[test_rand(&rs) % N(good_sql)];
    int nt = tokens_of(z, t, 256);
    int cut = (int)(test_rand(&rs) % (uint64_t)(nt + 1));
    for (int i = 0; i < cut; i++) idx[i] = i;
    int o = build(buf, sizeof buf - 200, z, t, idx, cut, "");
    if (o < 0) continue;
    int extra = 1 + (int)(test_rand(&rs) % 3);
    for (int e = 0; e < extra; e++) {
      const char *w = (test_rand(&rs) % 2)
                          ? sql_keyword_at((int)(test_rand(&rs) % (uint64_t)sql_keyword_count()))
                          : punct[test_rand(&rs) % N(punct)];
      o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%s", o ? " " : "", w);
    }
    bad += compare(db, buf, -1, &nparse, &nok, bad < 25);
  }
  printf("  %d continuations: %d parse errors in the reference, %d accepted; %d differ\n", total,
         nparse, nok, bad);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}

/* Arbitrary bytes (NULs and high bytes included): never a crash or a leak. */
TEST(random_bytes_never_crash) {
  uint64_t rs = test_seed() * 13 + 5;
  char buf[96];
  for (int m = 0; m < 50000; m++) {
    int len = (int)(test_rand(&rs) % 80);
    for (int i = 0; i < len; i++) {
      uint64_t r = test_rand(&rs);
      /* mostly SQL-ish bytes, sometimes anything */
      static const char sqlish[] = "select from where ( ) , ; ' \" [ ] ` x 1 . - * / = < > ! | ";
      buf[i] = (r % 4) ? sqlish[(r >> 8) % (sizeof sqlish - 1)] : (char)(r >> 16);
    }
    buf[len] = 0;
    /* an exact-size copy without terminator: ASan catches any read past it */
    char *exact = malloc(len ? (size_t)len : 1);
    memcpy(exact, buf, (size_t)len);
    UtilArena a;
    util_arena_init(&a, 64);
    SqlStmt *s = NULL;
    const char *tail = NULL;
    char *err = NULL;
    int rc = sql_parse(&a, len ? exact : buf, len, &s, &tail, &err);
    CHECK(rc == SHALE_OK || rc == SHALE_ERROR);
    CHECK((rc == SHALE_ERROR) == (err != NULL));
    if (rc == SHALE_OK) {
      const char *base = len ? exact : buf;
      CHECK(tail >= base && tail <= base + len);
      char *p = sql_ast_print(s);
      CHECK(p != NULL);
      shale_free(p);
    }
    shale_free(err);
    util_arena_free(&a);
    free(exact);
  }
}

/* Random CREATE TABLE statements built from column and table constraint
 * pieces (valid and odd combinations alike) against the reference. */
TEST(random_create_table_match_reference) {
  static const char *const names[] = {"a", "\"b c\"", "[d]", "key", "replace", "`e`", "f", "row"};
  static const char *const types[] = {"",     "INT",  "VARCHAR(10)",     "DOUBLE PRECISION",
                                      "TEXT", "'t'",  "DECIMAL(10, -2)", "int generated always",
                                      "BLOB", "x y z"};
  static const char *const cons[] = {"PRIMARY KEY",
                                     "PRIMARY KEY DESC ON CONFLICT IGNORE",
                                     "PRIMARY KEY AUTOINCREMENT",
                                     "NOT NULL",
                                     "NOT NULL ON CONFLICT FAIL",
                                     "NULL",
                                     "UNIQUE",
                                     "UNIQUE ON CONFLICT REPLACE",
                                     "CHECK (a > 0)",
                                     "DEFAULT 1",
                                     "DEFAULT -1.5",
                                     "DEFAULT 'x'",
                                     "DEFAULT (1 + 2)",
                                     "DEFAULT CURRENT_TIME",
                                     "DEFAULT NULL",
                                     "DEFAULT x'00'",
                                     "DEFAULT true",
                                     "COLLATE NOCASE",
                                     "REFERENCES t2",
                                     "REFERENCES t2(a) ON DELETE CASCADE ON UPDATE SET NULL",
                                     "REFERENCES t2 MATCH FULL",
                                     "DEFERRABLE INITIALLY DEFERRED",
                                     "NOT DEFERRABLE",
                                     "GENERATED ALWAYS AS (1) STORED",
                                     "AS (2)",
                                     "AS (3) VIRTUAL",
                                     "CONSTRAINT c1",
                                     "CONSTRAINT c2 NOT NULL",
                                     "ON CONFLICT ABORT",
                                     "DEFAULT",
                                     "CHECK",
                                     "AUTOINCREMENT"};
  static const char *const tcons[] = {
      "PRIMARY KEY (a)",
      "PRIMARY KEY (a DESC, f COLLATE BINARY) ON CONFLICT ROLLBACK",
      "UNIQUE (a, f)",
      "CHECK (a <> f)",
      "FOREIGN KEY (a) REFERENCES t2",
      "FOREIGN KEY (a, f) REFERENCES t2 (a, b) ON DELETE RESTRICT DEFERRABLE",
      "CONSTRAINT x UNIQUE (a)",
      "CONSTRAINT y",
      "PRIMARY KEY (a AUTOINCREMENT)",
      "FOREIGN KEY a REFERENCES t2",
      "UNIQUE a"};
  static const char *const opts[] = {
      "", "", "", " WITHOUT ROWID", " STRICT", " WITHOUT ROWID, STRICT", " STRICT,", " WITHOUT x"};
  sqlite3 *db = ref_open();
  uint64_t rs = test_seed() * 17 + 9;
  int nparse = 0, nok = 0, bad = 0, total = test_long() ? 200000 : 20000;
  char buf[2048];
  for (int m = 0; m < total; m++) {
    int o = snprintf(buf, sizeof buf, "CREATE TABLE tnew(");
    int ncols = 1 + (int)(test_rand(&rs) % 3);
    for (int c = 0; c < ncols; c++) {
      o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%s %s", c ? ", " : "",
                    c == 0 ? "a" : names[test_rand(&rs) % N(names)],
                    types[test_rand(&rs) % N(types)]);
      int nc = (int)(test_rand(&rs) % 4);
      for (int k = 0; k < nc; k++)
        o += snprintf(buf + o, sizeof buf - (size_t)o, " %s", cons[test_rand(&rs) % N(cons)]);
    }
    int nt = (int)(test_rand(&rs) % 3);
    for (int k = 0; k < nt; k++)
      o += snprintf(buf + o, sizeof buf - (size_t)o, "%s%s", test_rand(&rs) % 4 ? ", " : " ",
                    tcons[test_rand(&rs) % N(tcons)]);
    snprintf(buf + o, sizeof buf - (size_t)o, ")%s", opts[test_rand(&rs) % N(opts)]);
    bad += compare(db, buf, -1, &nparse, &nok, bad < 25);
  }
  printf("  %d tables: %d parse errors in the reference, %d accepted; %d differ\n", total, nparse,
         nok, bad);
  CHECK_EQ(bad, 0);
  sqlite3_close(db);
}
