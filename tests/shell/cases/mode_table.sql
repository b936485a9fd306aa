-- .mode table: every value kind, with and without headers
.read setup.sql
.mode table
select * from t;
select i, s from t where 0;
select 1 as "weird ""name""", null as n, 3.0 as r, x'0a' as b;
.headers on
select * from t;
select i, s from t where 0;
select 1 as "weird ""name""", null as n, 3.0 as r, x'0a' as b;
.headers off
select s from t order by rowid desc limit 2;
