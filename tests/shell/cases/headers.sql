-- .headers with list/csv/column modes, set before and after .mode
.read setup.sql
.headers on
select i, r from t limit 2;
.headers off
.mode column
select i, r from t limit 2;
.headers yes
.mode csv
select i, r from t limit 2;
.headers 0
select i, r from t limit 2;
.headers maybe
select 1;
.headers
.headers on off
