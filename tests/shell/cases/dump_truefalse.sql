-- .dump of boolean and identifier defaults reloads: DEFAULT true/false, "string", bare word
-- files: d1.sql d2.sql
create table b(x default true, y default false, z default "foo", w default bar, true, v check(v is not false));
insert into b(true, v) values(1, 2);
insert into b(x, v) values(false, true);
.once d1.sql
.dump
.open --new fresh.db
.read d1.sql
insert into b(v) values(3);
select * from b;
.once d2.sql
.dump
