#!/usr/bin/env bash
# Checks the built modules' gzipped sizes against their bars (scripts/size-bars.txt, one
# `module glob bar` line each; bytes of `gzip -9 -c FILE`, as scripts/build.sh prints them).
# Exit 1, naming the module, its size and its bar, when one is larger than its bar or missing.
#
# Usage: scripts/check-sizes.sh [DIST_DIR] [BARS_FILE]   (defaults: dist/, scripts/size-bars.txt)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="${1:-$ROOT/dist}"
BARS="${2:-$ROOT/scripts/size-bars.txt}"
shopt -s nullglob
status=0
while read -r module glob bar; do
  case "$module" in ''|'#'*) continue ;; esac
  files=("$DIST"/$glob)
  if [ "${#files[@]}" -ne 1 ]; then
    echo "size check: module \`$module\`: expected one file $DIST/$glob, found ${#files[@]} (${files[*]})" >&2
    status=1
    continue
  fi
  size=$(gzip -9 -c "${files[0]}" | wc -c)
  if [ "$size" -gt "$bar" ]; then
    echo "size check FAILED: module \`$module\` ($(basename "${files[0]}")) is $size bytes gzipped, over its bar of $bar bytes by $((size - bar))." >&2
    echo "  Make it smaller, or raise the bar deliberately: edit the \`$module\` line of $BARS (its header says how)." >&2
    status=1
  else
    echo "size check: module \`$module\`: $size bytes gzipped, $((bar - size)) under its bar of $bar" >&2
  fi
done < "$BARS"
exit "$status"
