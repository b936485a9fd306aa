-- args: -box
.read setup.sql
select i, s, b from t;
.show
