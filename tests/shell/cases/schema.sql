-- .schema, .tables, .indexes: all, patterns, views with column comments, quoted names
.read setup.sql
create table "x y"(p, q);
create table abc(a unique, b);
create index abc_b on abc(b);
create view v as select i, s as "s s" from t;
create trigger trg after delete on abc begin select 1; end;
create table c1(a) ;
create table withcomment(a, -- a comment
  b /* another */);
create table auto(id integer primary key autoincrement);
.schema
.schema t
.schema abc
.schema a%
.schema X*
.schema nosuch
.schema --nosys
.schema sqlite_master
.schema a b
.schema --bogus
.tables
.tables a%
.tables nosuch
.indexes
.indexes abc
.indices abc
.indexes a b
create table longname_number_one_abcdefghijklmnop(x);
create table longname_number_two_abcdefghijklmnop(x);
create table longname_number_three_abcdefghijklmnopqrstuvwxyz(x);
.tables
