-- pipes: .import from a command, .output/.once to a command, .read from a command
.import "|printf 'a,b\n1,2\n'" --csv t
select * from t;
.import --csv "|printf 'a,b\n3,4\n'" t
select * from t;
.output "|tr a-z A-Z"
select 'hello';
.output
.read "|echo select 42;"
.once |cat
select 'x';
select 'y';
