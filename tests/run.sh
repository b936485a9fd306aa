#!/usr/bin/env bash
# run.sh BUILD_DIR -- run every test binary in BUILD_DIR/tests, each in its own
# process with a timeout, SHALE_TEST_JOBS of them at a time (default: the
# number of CPUs), and print the total as "N passed, N failed".
# A binary that crashes, times out or prints no summary counts as one failure.
set -u
dir=${1:-build}/tests
timeout_s=${SHALE_TEST_TIMEOUT:-600}
jobs=${SHALE_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run_one() { # binary -> $out/<name>.log, .rc, .secs
  local t=$1 name start rc
  name=$(basename "$t")
  start=$(date +%s)
  timeout "$timeout_s" "$t" >"$out/$name.log" 2>&1
  rc=$?
  echo "$rc" >"$out/$name.rc"
  echo $(($(date +%s) - start)) >"$out/$name.secs"
}
export -f run_one
export out timeout_s

bins=()
for t in "$dir"/*; do
  [ -x "$t" ] && [ -f "$t" ] && bins+=("$t")
done
printf '%s\n' "${bins[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}

total_p=0
total_f=0
failed_bins=()
for t in "${bins[@]}"; do
  name=$(basename "$t")
  rc=$(cat "$out/$name.rc" 2>/dev/null || echo 1)
  secs=$(cat "$out/$name.secs" 2>/dev/null || echo '?')
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/$name.log" | tail -n 1)
  if [ -z "$line" ]; then
    tail -n 30 "$out/$name.log"
    echo "CRASH $name (exit $rc, no summary)"
    total_f=$((total_f + 1))
    failed_bins+=("$name")
    continue
  fi
  p=$(echo "$line" | awk '{print $1}')
  f=$(echo "$line" | awk '{print $3}')
  if [ "$f" -gt 0 ] || [ "$rc" -ne 0 ]; then
    grep -v '^ok ' "$out/$name.log" | tail -n 60
    [ "$f" -eq 0 ] && f=1
    failed_bins+=("$name")
  fi
  printf '%-28s %s  (%ss)\n' "$name" "$line" "$secs"
  total_p=$((total_p + p))
  total_f=$((total_f + f))
done
[ ${#failed_bins[@]} -gt 0 ] && echo "failing binaries: ${failed_bins[*]}"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
