-- .quit stops reading; exit code still 1 after an earlier error
select 1;
select * from nosuch;
.quit
select 2;
