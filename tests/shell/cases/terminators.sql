-- statements over several lines, GO and / terminators, comments, empty statements, no final ';'
select 1,
  2
;
select 3
go
select 4
/
-- a comment line
/* block
   comment */
;;;
select 5; -- trailing comment
select 6; select 7;
# a hash line is ignored
  .print indented dot-command is SQL?
select 'x' as "semi;colon", ';' as s;
select 8
