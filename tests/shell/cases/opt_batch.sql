-- args: -batch -separator ,
select 1, 2;
select * from nosuch;
select 3;
