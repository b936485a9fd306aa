-- .separator with escapes, quoting, row separators; csv after .separator
.read setup.sql
.separator ,
select i, s from t limit 3;
.separator "\t" "\r\n"
select i, s from t limit 3;
.separator ' :: ' ' ;;\n'
select i, s from t limit 3;
.separator \001 \002
select 1, 2;
.mode csv
.separator ;
select s from t;
.separator
.show
