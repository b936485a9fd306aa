-- .import usage errors, missing files, ragged rows, duplicate header names, failed inserts
.import
.import people.csv
.import a b c
.import --bogus a b
.import nosuch.csv t
.import --csv ragged.csv rg
.schema rg
select * from rg;
create table u(a primary key, b);
.import --csv people.csv u
select count(*) from u;
.import --csv people.csv u
select count(*) from u;
.import --ascii people.csv asc
select count(*) from asc;
select 'after';
