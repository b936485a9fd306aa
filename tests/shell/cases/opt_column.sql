-- args: -column -nullvalue NIL -separator ;
.read setup.sql
select i, n from t;
.mode list
select i, n from t;
.show
