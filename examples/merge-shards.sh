#!/usr/bin/env bash
# Concatenates the outputs of the n shards of an `fmperf sweep` into the whole sweep's output.
#
# Usage: examples/merge-shards.sh PARTS_DIR N OUT
#   PARTS_DIR  the folder holding part-000000.<ext> … part-(N-1).<ext> (written by gnu-parallel.sh
#              or slurm-array.sbatch; <ext> is csv or jsonl)
#   N          the shard count the parts were run with (every part must be there)
#   OUT        the merged file (written atomically: OUT.tmp, then renamed)
#
# Shards of a sweep are contiguous ranges of its points in sweep order and only shard 0 writes the
# CSV header, so the whole output is the parts in shard order, concatenated byte for byte (the same
# for JSON Lines). This script checks that every part exists, so a missing or failed shard is an
# error, not a silently shorter result.
#
# `merge-shards.sh --claim PARTS_DIR N FLAGS…` (used by the other two scripts) records in
# PARTS_DIR/sweep.txt which sweep the parts belong to (shard count and flags), or checks that they
# are those already recorded, so parts of different sweeps are never mixed; the merge checks N too.
set -euo pipefail
if [ "${1:-}" = "--claim" ]; then
  dir="$2" n="$3"; shift 3
  want="$(printf 'shards %s\nflags' "$n"; printf ' %q' "$@"; printf '\n')"
  if [ -f "$dir/sweep.txt" ]; then
    if [ "$(cat "$dir/sweep.txt")" != "$want" ]; then
      echo "merge-shards: $dir holds the parts of another sweep:" >&2
      sed 's/^/  /' "$dir/sweep.txt" >&2
      echo "  (this one: $(printf '%s' "$want" | tr '\n' ' ')); use another folder or delete it" >&2
      exit 1
    fi
  else
    printf '%s\n' "$want" > "$dir/sweep.txt.$$" && mv "$dir/sweep.txt.$$" "$dir/sweep.txt"
  fi
  exit 0
fi
if [ $# -ne 3 ]; then
  echo "usage: $0 PARTS_DIR N OUT" >&2
  exit 2
fi
DIR="$1" N="$2" OUT="$3"
case "$N" in '' | *[!0-9]* | 0) echo "merge-shards: N must be a positive integer, got \`$N\`" >&2; exit 2 ;; esac
ext=""
for e in csv jsonl; do
  if [ -e "$DIR/part-000000.$e" ]; then ext="$e"; fi
done
if [ -f "$DIR/sweep.txt" ] && [ "$(head -1 "$DIR/sweep.txt")" != "shards $N" ]; then
  echo "merge-shards: $DIR holds parts of a sweep in $(head -1 "$DIR/sweep.txt" | cut -d' ' -f2) shards, not $N" >&2
  exit 1
fi
if [ -z "$ext" ]; then
  echo "merge-shards: no $DIR/part-000000.csv or .jsonl (was shard 0 run?)" >&2
  exit 1
fi
missing=()
parts=()
for ((i = 0; i < N; i++)); do
  p="$(printf '%s/part-%06d.%s' "$DIR" "$i" "$ext")"
  if [ -f "$p" ]; then parts+=("$p"); else missing+=("$i"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "merge-shards: ${#missing[@]} of $N parts missing (shards ${missing[*]:0:20}); rerun them, then merge again" >&2
  exit 1
fi
cat "${parts[@]}" > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "merge-shards: $N parts → $OUT ($(wc -l < "$OUT") lines)" >&2
