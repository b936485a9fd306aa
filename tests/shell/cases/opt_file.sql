-- args: test.db
-- setup: create table t1(a); insert into t1 values(1);
select * from t1;
insert into t1 values(2);
.show
.open other.db
.tables
create table o(x);
.open test.db
select count(*) from t1;
.open --new other.db
.tables
.open /nonexistent/dir/x.db
select 'in memory now';
.show
.open --bogus
