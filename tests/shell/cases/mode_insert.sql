-- .mode insert: default table name, named tables, keywords and quoting, headers
.read setup.sql
.mode insert
select * from t;
.mode insert t2
select i, s from t;
.mode insert "odd name"
select s from t limit 2;
.mode insert select
select 1;
.headers on
.mode insert x_1
select i, s as "col ""q""", n as "order" from t;
select 'a
b' || char(13) || 'c', 'has \n marker
nl';
