-- args: -bogus
select 1;
