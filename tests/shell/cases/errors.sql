-- error lines: parse/runtime errors, the rest of the input line skipped, later lines run, exit 1
create table e(a unique, b not null);
insert into e values(1, 1);
insert into e values(1, 2); select 'skipped';
select 'runs';
insert into e values(2, null);
selec 1;
select * from nosuch; select 'skipped too';
  select 3
  from nosuch2;
select nosuchcol from e;
select nosuchfn(1);
select 'abc;
select 1 +;
select * from e where zzz = 1;
create table e(x);
select $;
select 1 from e group by;
select 1111111111, 222222222222, 333333333 from e where zzzzz = 1 and yyy = 2 and qqqqqqqqqqqq;
.bogus
.mode foo
select 'end';
select (1
