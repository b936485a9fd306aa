-- .exit N exits with N
select 1;
.exit 3
select 2;
