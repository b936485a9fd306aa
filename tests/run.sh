#!/usr/bin/env bash
# run.sh BUILD_DIR -- run every test binary in BUILD_DIR/tests, each in its own
# process with a timeout, and print the total as "N passed, N failed".
# A binary that crashes, times out or prints no summary counts as one failure.
set -u
dir=${1:-build}/tests
timeout_s=${SHALE_TEST_TIMEOUT:-600}
total_p=0
total_f=0
failed_bins=()
for t in "$dir"/*; do
  [ -x "$t" ] && [ -f "$t" ] || continue
  name=$(basename "$t")
  start=$(date +%s)
  out=$(timeout "$timeout_s" "$t" 2>&1)
  rc=$?
  end=$(date +%s)
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -z "$line" ]; then
    printf '%s\n' "$out" | tail -n 30
    echo "CRASH $name (exit $rc, no summary)"
    total_f=$((total_f + 1))
    failed_bins+=("$name")
    continue
  fi
  p=$(echo "$line" | awk '{print $1}')
  f=$(echo "$line" | awk '{print $3}')
  if [ "$f" -gt 0 ] || [ $rc -ne 0 ]; then
    printf '%s\n' "$out" | grep -v '^ok ' | tail -n 60
    [ "$f" -eq 0 ] && f=1
    failed_bins+=("$name")
  fi
  printf '%-28s %s  (%ss)\n' "$name" "$line" "$((end - start))"
  total_p=$((total_p + p))
  total_f=$((total_f + f))
done
[ ${#failed_bins[@]} -gt 0 ] && echo "failing binaries: ${failed_bins[*]}"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
