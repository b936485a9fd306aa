-- .timer, .changes, .echo, .bail (off), .show, .print
.read setup.sql
.timer on
select count(*) from t;
.timer off
.changes on
insert into t(i) values(100), (101);
update t set i = i where i > 99;
select 1;
.changes off
.echo on
select 'echoed'; select 'twice';
.print "a\tb" c 'd e'
.echo off
select 'not echoed';
.show
.bail
.timer
.changes maybe
.echo on off
.bail off
.show extra
