-- .dump's text reloads: dump, load into a fresh database, dump again
-- files: d1.sql d2.sql
.read setup.sql
create table a(x integer primary key autoincrement, y text default 'q', z blob);
insert into a(y, z) values('it''s', x'00'), ('x
y', null), (null, 1e300);
create index ai on a(y);
create view av as select * from a;
.once d1.sql
.dump
.open --new fresh.db
.read d1.sql
.once d2.sql
.dump
select count(*) from t;
select * from a;
