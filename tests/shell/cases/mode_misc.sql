-- .mode: no argument, prefixes, errors, wrap options, qbox, .width
.read setup.sql
.mode
.mode col
.mode
select i, s from t limit 3;
.mode li
.mode
.mode bogus
.mode box --wrap 10
select 'hello world this is long text' as a, 'abcdefghijklmnopqrstuvwxyz' as b;
.mode
.mode box --wrap 10 --wordwrap on
select 'hello world this is long text' as a, 'abcdefghijklmnopqrstuvwxyz' as b;
.mode table --ww --wrap 8
select 'one two three four five' as words;
.mode box --quote
select * from t limit 4;
.mode qbox
select 'x' as a, 1.5 as b;
.mode
.mode column
.width 3 -6 0 5
select 'abcdefgh' as a, 'xy' as b, 'zz' as c, 'é' as d;
.width
select 'abcdefgh' as a, 'xy' as b;
.mode markdown
.width -8
select 1 as n, 'x' as s;
.mode column --bogus
.mode list extra args here
