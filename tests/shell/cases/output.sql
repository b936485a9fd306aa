-- .output to a file and back, .once for one command, output to files of each mode
-- files: out.txt once.txt csv.txt
.read setup.sql
.output out.txt
select i, s from t;
.mode csv
.headers on
select * from t;
.show
.output
select 'back on stdout';
.once once.txt
select 'only this one';
select 'and this is on stdout';
.once csv.txt
select i, b from t;
.once
select 'once without file';
.output /nonexistent/dir/x.txt
select 'after failed output';
.output a b
.once a b
.once --bogus x
