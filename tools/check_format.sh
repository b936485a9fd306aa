#!/usr/bin/env bash
# check_format.sh -- every C source and header of the tree is formatted as the
# checked-in .clang-format says (generated tables excepted). With --fix it
# formats them instead of checking. Exits 1 and lists the files that differ.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || {
  echo "check_format: installing clang-format" >&2
  apt-get install -y -qq clang-format >/dev/null
}
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v -x -F -e src/ext/tok/tok_unitab.h)
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted (run tools/check_format.sh --fix):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
