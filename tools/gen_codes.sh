#!/bin/sh
# gen_codes.sh [--check] -- write the result-code #define blocks of
# include/shale.h (SHALE_*) and include/sqlite3.h (SQLITE_*) from the one list
# src/util/result_codes.def, between the lines "BEGIN result codes" and
# "END result codes". With --check nothing is written: the exit status is 1
# when a header differs from what would be written (tests/unit/util/test_codes).
set -eu
cd "$(dirname "$0")/.."
def=src/util/result_codes.def
status=0

block() { # PREFIX -> the generated lines on stdout
  awk -v P="$1" '
    /^PRIMARY\(/ {
      sub(/^PRIMARY\(/, ""); split($0, f, /, */)
      prim[++np] = "#define " P "_" f[1] " " f[2]
    }
    /^EXTENDED\(/ {
      sub(/^EXTENDED\(/, ""); split($0, f, /, */)
      ext[++ne] = "#define " P "_" f[1] " (" P "_" f[2] " | (" f[3] " << 8))"
    }
    END {
      print "/* ---- Primary result codes (same numbers as SQLite) ---- */"
      for (i = 1; i <= np; i++) print prim[i]
      print ""
      print "/* ---- Extended result codes: primary | (detail << 8) ---- */"
      for (i = 1; i <= ne; i++) print ext[i]
    }' "$def"
}

for pair in include/shale.h:SHALE include/sqlite3.h:SQLITE; do
  file=${pair%%:*}
  prefix=${pair#*:}
  tmp=$(mktemp)
  block "$prefix" >"$tmp.block"
  awk -v B="$tmp.block" '
    /BEGIN result codes/ { print; while ((getline l < B) > 0) print l; skip = 1; next }
    /END result codes/ { skip = 0 }
    !skip { print }' "$file" >"$tmp"
  if ! grep -q "BEGIN result codes" "$file"; then
    echo "$file: no BEGIN result codes line" >&2
    status=1
  elif [ "${1:-}" = "--check" ]; then
    if ! cmp -s "$tmp" "$file"; then
      echo "$file: result codes differ from $def (run make codes)" >&2
      status=1
    fi
  elif ! cmp -s "$tmp" "$file"; then
    cp "$tmp" "$file"
    echo "wrote $file"
  fi
  rm -f "$tmp" "$tmp.block"
done
exit $status
