select 1;
.quit
select 2;
