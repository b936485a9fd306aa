-- EXPLAIN QUERY PLAN renders as sqlite3's tree, in any output mode
create table t(a, b);
create index ti on t(a);
create table u(c, d);
explain query plan select * from t where a = 1;
.mode csv
explain query plan select * from t, u where t.b = u.d order by 1;
.mode box
explain query plan select * from t where a in (select c from u) union select 1, 2;
explain query plan select (select count(*) from u where c = t.a) from t;
