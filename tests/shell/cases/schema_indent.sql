-- .schema --indent: long statements one item per line, short ones collapsed, views/triggers as stored
create table t(a integer primary key, b text not null default 'x', c, unique(b,c));
create index ti on t(b);
create view v as select a, b from t where a > 1;
create table u(x,   y  -- comment
, z);
create trigger tr after insert on t begin insert into u values(1,2,3); end;
create table w(p, q, foreign key(p) references t(a) on delete cascade, check(q > (1+2)));
create table "quoted name"(   "col (1)" text default 'a,b', [br,ack] int,   `tick` real, r default (round(1.5, 0)));
create table s(a);
create table longer_table_name_for_wrapping(first_column integer, second_column text, third);
create table withcomment(alpha integer, -- the first
  beta text, /* inline */ gamma blob, delta numeric default 12345678901234567890);
create table x2(q text default 'it''s (a) "test"', w);
.schema --indent
.schema --indent t
