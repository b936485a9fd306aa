-- .read: statements and errors in a file (line numbers of that file), nesting, missing files
select 'start';
.read script.sql
select 'after read';
.read nosuch.sql
.read
.read a b
select 'end';
.read quits.sql
select 'a .quit in a read file ends only that file';
