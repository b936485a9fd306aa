-- .dump of every kind of object, names that need quotes, autoincrement, blobs, newlines
.read setup.sql
create table "odd name"(a integer primary key autoincrement, "b c" text, d default 'x');
insert into "odd name"("b c") values('one'), ('two
lines'), (null);
create table plain(k primary key, v) without rowid;
insert into plain values('k1', 1.5), ('k2', x'0102');
create index idx_t on t(i, s);
create unique index "idx odd" on "odd name"("b c");
create view v1 as select i, s from t;
create trigger tr1 after insert on plain begin insert into t(i) values(new.v); end;
create table "select"("from" int, [to] text, `group` real);
insert into "select" values(1, 'a', 2.0);
create table seq2(id integer primary key autoincrement);
insert into seq2 default values;
insert into seq2 default values;
.dump
.dump t
.dump "odd%"
.dump nomatch
.dump --bogus
