CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n);
INSERT INTO t VALUES(1, 2.5, 'plain', x'00ff10', NULL);
INSERT INTO t VALUES(-42, 0.1, 'it''s "quoted", with comma', x'', 'x');
INSERT INTO t VALUES(9223372036854775807, 1e100, 'line1
line2', x'41', 3);
INSERT INTO t VALUES(0, -0.0, 'ünïcödé 日本語', NULL, 1.0);
INSERT INTO t VALUES(NULL, 1e-7, '', x'deadbeef', 'tab	here');
INSERT INTO t VALUES(7, 123456789.125, ' lead', 'text', 'cr' || char(13) || 'lf' || char(10) || 'end');
INSERT INTO t VALUES(-9223372036854775808, 2.0, '<a href="x">&amp;</a>', x'5c6e', '\back\slash');
