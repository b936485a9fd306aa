-- args: -readonly test.db
-- setup: create table t1(a); insert into t1 values(1);
select * from t1;
insert into t1 values(2);
select count(*) from t1;
