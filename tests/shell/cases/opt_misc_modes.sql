-- args: -line -quote -table -markdown -list -tabs -html -ascii -newline ~ -echo
select 1 as a, 'x' as b;
.show
