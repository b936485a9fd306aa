-- args: -init script.sql
select 'after init';
