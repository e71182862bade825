#!/usr/bin/env bash
# Runs a large `fmperf sweep` as N shards through GNU parallel (https://www.gnu.org/software/parallel/)
# and merges them into the whole sweep's output: on one machine, or on many with parallel's own
# `--sshlogin`/`--sshloginfile` (every machine needs fmperf on its PATH and the shared PARTS_DIR).
#
# Usage: examples/gnu-parallel.sh [-n SHARDS] [-j JOBS] [-t THREADS] [-d PARTS_DIR] -o OUT \
#            [-p 'PARALLEL OPTIONS'] -- <fmperf sweep flags, with --format csv or --format json>
#   -n SHARDS     how many parts to cut the sweep into (default 64; more parts = finer restarts)
#   -j JOBS       shards run at once (default: parallel's own, one per core)
#   -t THREADS    --threads of each shard's fmperf (default 1: parallel already fills the cores)
#   -d PARTS_DIR  where the parts go (default OUT.parts); parts already there are not run again,
#                 so rerunning the same command after an interruption finishes the rest
#   -o OUT        the merged output (CSV with one header, or JSON Lines)
#   -p OPTIONS    extra options for parallel, e.g. '--sshloginfile nodes.txt' or '--progress'
#   FMPERF=/path/to/fmperf  the binary to run (default: fmperf on PATH)
#
# Example (128 points of gpt3_1T on H200: devices × scale-up domain × global batch):
#   examples/gnu-parallel.sh -n 16 -o sweep.csv -- --model gpt3_1T --system H200 \
#       --axis gpus=512..65536 --axis nvlink=8,16,32,64 --axis batch=1024..8192 --format csv
#
# The merged file is byte-identical to `fmperf sweep … --format csv` run in one piece (tested in
# crates/cli/tests/cli_cluster.rs). Each part is written to part-NNNNNN.<ext>.tmp and renamed when
# complete, so a part file is either whole or absent.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SHARDS=64 JOBS="" THREADS=1 PARTS="" OUT="" POPTS=""
while getopts "n:j:t:d:o:p:h" opt; do
  case "$opt" in
    n) SHARDS="$OPTARG" ;;
    j) JOBS="$OPTARG" ;;
    t) THREADS="$OPTARG" ;;
    d) PARTS="$OPTARG" ;;
    o) OUT="$OPTARG" ;;
    p) POPTS="$OPTARG" ;;
    h) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "see $0 -h" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
FMPERF="${FMPERF:-fmperf}"
fail() { echo "gnu-parallel.sh: $*" >&2; exit 2; }
[ -n "$OUT" ] || fail "-o OUT is required (see -h)"
case "$SHARDS" in '' | *[!0-9]* | 0) fail "-n must be a positive integer, got \`$SHARDS\`" ;; esac
command -v parallel >/dev/null 2>&1 || fail "GNU parallel is not installed (Debian/Ubuntu: apt-get install parallel)"
command -v "$FMPERF" >/dev/null 2>&1 || fail "no fmperf binary \`$FMPERF\` (build it: cargo build --release -p fmperf-cli; set FMPERF=…)"
format=""
for ((k = 1; k <= $#; k++)); do
  a="${!k}"
  case "$a" in
    --format=*) format="${a#--format=}" ;;
    --format) n=$((k + 1)); format="${!n:-}" ;;
    --shard | --shard=*) fail "do not pass --shard: this script sets it" ;;
  esac
done
case "$format" in
  csv) ext=csv ;;
  json) ext=jsonl ;;
  *) fail "pass --format csv or --format json among the sweep flags (tables do not concatenate)" ;;
esac
PARTS="${PARTS:-$OUT.parts}"
mkdir -p "$PARTS"
# The parts of one sweep only: a folder holding parts of other flags or another shard count is refused.
"$HERE/merge-shards.sh" --claim "$PARTS" "$SHARDS" "$@" || exit 2
# One job: shard i → PARTS/part-<i>.<ext>, unless already there.
job='i="$1"; dir="$2"; n="$3"; ext="$4"; t="$5"; shift 5
out="$(printf "%s/part-%06d.%s" "$dir" "$i" "$ext")"
[ -f "$out" ] && exit 0
"$@" --shard "$i/$n" --threads "$t" > "$out.tmp" || { rm -f "$out.tmp"; exit 1; }
mv "$out.tmp" "$out"'
jobs=()
[ -n "$JOBS" ] && jobs=(-j "$JOBS")
# shellcheck disable=SC2086 # POPTS is a list of parallel options
# --halt soon,fail=1: bad flags fail every shard alike, so stop at the first failure.
seq 0 $((SHARDS - 1)) | parallel "${jobs[@]}" --halt soon,fail=1 --joblog "$PARTS/joblog" $POPTS \
  -q bash -c "$job" job {} "$PARTS" "$SHARDS" "$ext" "$THREADS" "$FMPERF" sweep "$@"
"$HERE/merge-shards.sh" "$PARTS" "$SHARDS" "$OUT"
