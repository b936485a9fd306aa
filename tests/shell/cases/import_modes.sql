-- .import following the output mode: list ('|'), tabs, csv (row separator quirk), ascii
.import pipes.txt pp
select * from pp;
.mode tabs
.import tabs.tsv tt
select * from tt;
.mode csv
.import people.csv pc
.show
select * from pc;
.mode list
.separator ;
.import tabs.tsv bad
.separator ab
.import tabs.tsv bad
.separator , xy
.import tabs.tsv bad
.separator "" 
.import tabs.tsv bad
.mode ascii
select 1, 2;
