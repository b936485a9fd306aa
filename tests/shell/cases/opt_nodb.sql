-- args: /nonexistent/dir/x.db
select 1;
