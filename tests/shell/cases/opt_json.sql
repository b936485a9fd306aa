-- args: -json -noheader
.read setup.sql
select * from t;
