-- args: -cmd '.mode csv' -cmd 'create table c(a); insert into c values(1)' -cmd '.headers on'
select * from c;
.show
