-- args: test.db
-- setup: create table p(a integer primary key, b); insert into p values(1, 'it''s'); create table u_data(k, v); insert into u_data values(1, x'00ff'); pragma writable_schema=on; insert into sqlite_schema values('table', 'u', 'u', 0, 'CREATE VIRTUAL TABLE u USING nosuchmod(a, ''b c'')'); pragma writable_schema=off;
-- a file holding a virtual table whose module neither shell has
select * from p;
.schema
.schema u
.tables
.indexes
.dump
.dump u%
select * from u;
insert into u values(1, 2);
select name, type from pragma_table_list order by name;
pragma table_info(u);
drop table u;
select count(*) from sqlite_schema;
