#!/bin/bash
# commit_syscalls.sh -- system calls per commit of SQLite (Debian's
# libsqlite3) and Shale (build/compat) on the commit rows' settings, from
# strace of build/commit-probe (bench/compat/commit_probe.c). Syscalls are
# the commit rows' cost that callgrind does not see (fsync latency, writes,
# lock calls).
#
#   tools/commit_syscalls.sh [N]      N measured commits (default 200)
#
# Prints, per mode (delete/full, wal/normal, wal/full) and engine, the calls
# between the probe's markers divided by N; with SHOW=1 also the trace of
# the last commit.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
make --no-print-directory -s build/commit-probe compat >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mode in "delete full" "wal normal" "wal full"; do
  set -- $mode
  for eng in sqlite shale; do
    lib=""
    [ "$eng" = shale ] && lib="$PWD/build/compat"
    LD_LIBRARY_PATH=$lib strace -f -o "$tmp/tr" build/commit-probe "$tmp/db" "$1" "$2" "$N" 2>/dev/null
    sed -n '/=MARK=/,/=END=/p' "$tmp/tr" | grep -v -e '=MARK=' -e '=END=' |
      sed -E 's/^[0-9]+ +//; s/^<\.\.\. ([a-z0-9_]+) resumed>.*/\1 resumed/' |
      awk -v n="$N" -v tag="$1/$2 $eng" '
        $2 == "resumed" { next }
        { sub(/\(.*/, "", $1); c[$1]++ }
        END { printf "%-18s", tag; for (k in c) printf " %s=%.2f", k, c[k] / n; printf "\n" }'
    if [ "${SHOW:-0}" = 1 ]; then
      sed -n '/=MARK=/,/=END=/p' "$tmp/tr" | tail -40
    fi
  done
done
