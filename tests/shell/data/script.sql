select 1;
select * from nosuch;
select 2;
create table r(a unique); insert into r values(1); insert into r values(1); select 3;
select 4;
