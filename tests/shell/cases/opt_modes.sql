-- args: -csv -header
-- command-line mode options: -csv keeps the "\n" row separator
.read setup.sql
select i, s from t;
.show
