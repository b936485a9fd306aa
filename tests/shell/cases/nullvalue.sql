-- .nullvalue in list, csv, column, box, line, json, quote modes
.read setup.sql
.nullvalue NULL
select i, n from t;
.nullvalue "<nil>"
.mode csv
select i, n from t;
.mode box
select i, n from t;
.mode line
select i, n from t limit 2;
.mode json
select i, n from t limit 2;
.mode quote
select i, n from t limit 2;
.nullvalue 'a very long null value text that is cut'
.mode list
select null;
.nullvalue
