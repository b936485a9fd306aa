-- .import of an empty file and of a file whose first line is empty
.import --csv empty.csv e
.tables
.import --csv blankfirst.csv bf
.schema bf
select * from bf;
create table ex(a);
.import --csv empty.csv ex
select count(*) from ex;
