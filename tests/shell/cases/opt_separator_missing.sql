-- args: -separator
select 1;
