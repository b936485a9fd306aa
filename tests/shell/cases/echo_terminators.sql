-- what .echo shows for swallowed lines: white space, comments, lone ';', "/" and "GO" with nothing pending
.echo on
.changes on
 ; -- x
/
;;
go
select 1
/
select 2
GO
/* only a comment */
select 3; -- trailing
.echo off
/
select 4;
