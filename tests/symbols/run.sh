#!/usr/bin/env bash
# test_symbols -- every global symbol of libshale.a carries its layer's prefix
# (issue 13: no generic names such as btree_page_init or sql_parse_expr that could clash with
# a program linking the static library). The allowed prefixes per folder of
# src/ are listed below; a symbol outside them fails the test with its object.
# Installed as BUILD/tests/test_symbols; reads the objects under BUILD/obj/src.
set -u
objdir=$(cd "$(dirname "$0")/.." && pwd)/obj/src
allowed() { # folder -> space-separated prefixes
  case $1 in
  api) echo "shale_ api_" ;;
  ext) echo "ext_" ;;
  ext/fts3) echo "fts3_" ;;
  ext/fts5) echo "fts5_" ;;
  ext/rtree) echo "rtree_" ;;
  ext/tok) echo "ext_tok_" ;;
  pager) echo "pager_ wal_" ;;
  parse) echo "sql_" ;;
  util) echo "util_ strbuf_ shale_" ;;
  *) echo "$1_" ;;
  esac
}
pass=0
fail=0
while IFS= read -r obj; do
  rel=${obj#"$objdir"/}
  folder=${rel%%/*}
  case $rel in ext/*/*) folder=ext/$(echo "$rel" | cut -d/ -f2) ;; esac
  prefixes=$(allowed "$folder")
  while read -r _ kind sym; do
    case $kind in T | D | B | R) ;; *) continue ;; esac
    case $sym in __*) continue ;; esac # compiler-made (e.g. ASan's __odr_asan.*)
    ok=0
    for p in $prefixes; do
      case $sym in "$p"*) ok=1 ;; esac
    done
    if [ $ok -eq 1 ]; then
      pass=$((pass + 1))
    else
      echo "not ok: $rel defines $sym (allowed: $prefixes)"
      fail=$((fail + 1))
    fi
  done < <(nm -g --defined-only "$obj" | awk 'NF == 3')
done < <(find "$objdir" -name '*.o' | sort)
[ $((pass + fail)) -gt 0 ] || { echo "no objects under $objdir"; fail=1; }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
