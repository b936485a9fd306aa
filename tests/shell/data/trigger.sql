create table rt(a);
create trigger rtr after insert on rt
begin
  insert into log values('read ' || new.a);
  insert into log values('twice');
end;
insert into rt values(7);
