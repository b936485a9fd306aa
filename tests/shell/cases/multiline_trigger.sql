-- statements over several lines: triggers (bodies hold ';'), strings and comments across lines, GO and / after a trigger
create table t(a);
create table log(x);
CREATE TRIGGER tr AFTER INSERT ON t
BEGIN
 INSERT INTO log VALUES(new.a);
END;
insert into t values(5);
select * from log;
create temp trigger
  tr2 before delete on t begin
    select 1;
    insert into log values('del'
    );
  end
;
delete from t;
select * from log;
explain query plan create trigger tr3 after update on t begin select 1;
end;
select name from sqlite_schema where type = 'trigger' order by name;
create trigger tr4 after insert on log begin select 1;
end
go
create trigger tr5 after insert on log begin select 2; end
/
select 'a;
b', /* c;
d */ 'e' -- f;
;
select count(*) from sqlite_temp_schema;
.read trigger.sql
select * from log;
create trigger bad after insert on t begin select 1; end
select 'after an error';
