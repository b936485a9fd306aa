-- args: -bail
select 1;
select * from nosuch;
select 2;
