-- edge cases: no rows, no columns, PRAGMA rows, escaped separators, CRLF input, no final newline
create table t(a,b);
.mode line
select * from t;
.mode json
select * from t;
select 1 as x where 0;
.mode box
create table u(x);
select * from t;
pragma table_info(t);
.mode list
.headers on
select * from t;
pragma table_info(t);
.print
.separator "\\n" "x\ty"
select 1,2;
.separator | \n
values(1,2),(3,4);
select 1; select 2
;
;
select 1;
select 2;
.mode csv
select 3,4;
select 5