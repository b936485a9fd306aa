-- .import --csv into a new table (header row names it) and an existing one
.import --csv people.csv p
.schema p
.mode box
select * from p;
.mode list
.import --csv people.csv p
select count(*) from p;
.import --csv --skip 1 people.csv p
select count(*), count(b), sum(length(c)) from p;
create table q(x, y, z);
.import --csv people.csv q
select * from q;
.import --csv bom.csv b
.schema b
select * from b;
.import --csv -v people.csv q
