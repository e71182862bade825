#!/usr/bin/env bash
# Proves that a clone of fmperf stands alone: everything a test or the build reads is inside the
# repository (issue 13 §1). CI runs in a clone with the project's shared/ folder beside it, so a test
# that quietly read ../shared would pass there; this script checks by hand what CI cannot.
#
#   1. Searches the committed tree for paths that reach outside the repository (`../shared`,
#      `/work/shared`, `shared/spec`, `shared/data`) in code, tests and scripts. Prose (`*.md`) may
#      cite where a data file came from; the data files' own `sources` and `notes` fields may too.
#   2. Clones the committed HEAD into a fresh temporary directory with no `shared/` beside it and
#      runs the host tests there (`cargo test --profile host`, as `scripts/test.sh` does).
#      With `--full`, runs the README's whole test command (`./scripts/test.sh`: host tests, wasm32
#      build, site build, browser tests) in the clone instead.
#
# Usage: scripts/check-standalone.sh [--full] [--keep] [--grep-only]
#   --full       run ./scripts/test.sh in the clone (installs tools if missing; slow)
#   --keep       keep the temporary clone (its path is printed)
#   --grep-only  only step 1
# CARGO_TARGET_DIR is honoured (default: the clone's own target/, i.e. a cold build).
# Only committed files are checked: commit first. Exit 0 when both steps pass.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FULL=0 KEEP=0 GREP_ONLY=0
for a in "$@"; do
  case "$a" in
    --full) FULL=1 ;;
    --keep) KEEP=1 ;;
    --grep-only) GREP_ONLY=1 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-standalone: unknown argument \`$a\` (see --help)" >&2; exit 2 ;;
  esac
done
step() { printf '\n== check-standalone: %s\n' "$*" >&2; }

SHA="$(git -C "$ROOT" rev-parse HEAD)"
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ]; then
  echo "check-standalone: note: uncommitted changes are not checked (the clone is of HEAD $SHA)" >&2
fi

step "references outside the repository in committed code, tests and scripts (HEAD ${SHA:0:10})"
# Every committed file except prose and the data files (which name their origin in `sources`/`notes`).
PATTERN='\.\./shared|/work/shared|shared/spec|shared/data'
all_hits="$(git -C "$ROOT" grep -nE "$PATTERN" "$SHA" -- . ':(exclude)scripts/check-standalone.sh' \
  | sed "s/^$SHA://" || true)"
# Lines that may cite an origin: prose files, the data files, and comments (`//`, `//!`, `///`, `#`).
code_hits="$(printf '%s\n' "$all_hits" | grep -v '^$' \
  | grep -vE '^[^:]+\.md:|^crates/core/data/[^:]+\.json:' \
  | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(//|#)' || true)"
if [ -n "$all_hits" ]; then
  echo "check-standalone: lines citing shared/ (allowed in prose, data sources and comments):" >&2
  printf '%s\n' "$all_hits" | cut -c1-160 | sed 's/^/  /' >&2
fi
if [ -n "$code_hits" ]; then
  echo "check-standalone: FAIL: code, tests or scripts name a path outside the repository:" >&2
  printf '%s\n' "$code_hits" | sed 's/^/  /' >&2
  exit 1
fi
echo "check-standalone: no code, test or script reads outside the repository" >&2
[ "$GREP_ONLY" = 1 ] && exit 0

TMP="$(mktemp -d "${TMPDIR:-/tmp}/fmperf-standalone.XXXXXX")"
cleanup() {
  if [ "$KEEP" = 1 ]; then echo "check-standalone: clone kept in $TMP/fmperf" >&2; else rm -rf "$TMP"; fi
  # Cargo names a workspace's artifacts by paths relative to the workspace, so with a shared
  # CARGO_TARGET_DIR the clone's build now stands for this tree's: this tree's sources look older
  # than it and would not be rebuilt, and its test binaries carry the clone's (deleted) paths
  # (`env!("CARGO_MANIFEST_DIR")`: seen as cli_cluster failing to find examples/). Touch every
  # Rust source here so that the next build recompiles the workspace's crates.
  if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    (cd "$ROOT" && git ls-files -z -- '*.rs' | xargs -0 touch) || true
  fi
}
trap cleanup EXIT
step "clone of HEAD ${SHA:0:10} into $TMP/fmperf"
git clone --quiet --no-hardlinks --no-checkout "$ROOT" "$TMP/fmperf"
git -C "$TMP/fmperf" checkout --quiet --detach "$SHA"
for p in "$TMP/shared" "$TMP/fmperf/../shared" "$TMP/fmperf/shared"; do
  if [ -e "$p" ]; then echo "check-standalone: $p exists; the check needs a clone with nothing beside it" >&2; exit 1; fi
done
echo "check-standalone: $(git -C "$TMP/fmperf" ls-files | wc -l) files, no shared/ beside the clone" >&2

cd "$TMP/fmperf"
start=$(date +%s)
if [ "$FULL" = 1 ]; then
  step "README test command in the clone: ./scripts/test.sh"
  ./scripts/test.sh
else
  step "host tests in the clone: cargo test --profile host (CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-<clone>/target})"
  cargo test --profile host 2>&1 | tee "$TMP/host-tests.log" | grep -E '^(test result|error|failures:|---- )' || true
  status=${PIPESTATUS[0]}
  passed=$(grep -Eo '[0-9]+ passed' "$TMP/host-tests.log" | awk '{s+=$1} END {print s+0}')
  failed=$(grep -Eo '[0-9]+ failed' "$TMP/host-tests.log" | awk '{s+=$1} END {print s+0}')
  suites=$(grep -c '^test result' "$TMP/host-tests.log" || true)
  echo "check-standalone: $suites test binaries, $passed passed, $failed failed (cargo exit $status)" >&2
  if [ "$status" != 0 ]; then
    KEEP=1
    echo "check-standalone: FAIL: host tests fail in a clone without ../shared (log: $TMP/host-tests.log)" >&2
    exit 1
  fi
fi
echo "check-standalone: OK in $(( $(date +%s) - start )) s: the clone of ${SHA:0:10} passes without ../shared" >&2
