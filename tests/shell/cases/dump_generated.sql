-- .dump of generated columns (not dumped), STRICT tables, keyword table names
create table t(a integer primary key, b, c as (a*2), d as (b||'x') stored);
insert into t(a,b) values(1,'p'),(2,'q');
create table "Group"(x);
insert into "Group" values(1);
create index gi on "Group"(x);
create table r(x) strict;
insert into r values(1);
.dump
