-- args: -bail
select 1;
.bogus
select 2;
