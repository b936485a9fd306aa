-- args: test.db 'select * from t1' '.mode csv' 'select a, b from t1; select 9' 'selec 1' 'select 2'
-- setup: create table t1(a, b); insert into t1 values(1, 'x'), (2, 'y,z');
select 'stdin is not read';
