#!/usr/bin/env bash
# Measures what issue 13 §2 asks about, on the built site (dist/): the WebAssembly a first visit
# downloads (raw and gzip -9 bytes, per file and in total), the offline single file, and where the
# bytes go (twiggy's top-N by retained size, when twiggy is installed), then, unless --no-time,
# the median time to the first result row (tests/bench/first-result.mjs).
#
# Usage: scripts/measure-size.sh [--build] [--top N] [--runs N] [--no-time] [--install-twiggy]
#   --build           run ./scripts/build.sh first (otherwise dist/ as it is)
#   --top N           rows of the twiggy breakdown (default 25)
#   --runs N          cold loads per place for the time to first result (default 15)
#   --no-time         sizes only
#   --install-twiggy  cargo install twiggy if it is missing (compiles for a few minutes)
# Sizes in bytes (B); KB = 1000 B. Goals of issue 13 §2: ≤ 400 KB gzipped wasm for the first view,
# offline file ≤ 1.2 MB, first result ≤ 300 ms (server) and ≤ 600 ms (file://).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$ROOT/tests/node_modules/.bin:$PATH"
BUILD=0 TOP=25 RUNS=15 TIME=1 INSTALL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=1 ;;
    --top) TOP="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --no-time) TIME=0 ;;
    --install-twiggy) INSTALL=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "measure-size: unknown argument \`$1\` (see --help)" >&2; exit 2 ;;
  esac
  shift
done
cd "$ROOT"
[ "$BUILD" = 1 ] && ./scripts/build.sh
DIST="$ROOT/dist"
[ -f "$DIST/index.html" ] || { echo "measure-size: no dist/: run ./scripts/build.sh or pass --build" >&2; exit 2; }

gz() { gzip -9 -c "$1" | wc -c; }
echo "== sizes (bytes; gzip -9)"
total_raw=0 total_gz=0
for f in "$DIST"/*.wasm; do
  raw=$(stat -c %s "$f"); z=$(gz "$f")
  total_raw=$((total_raw + raw)); total_gz=$((total_gz + z))
  printf '  %-48s %10d raw %10d gzipped\n' "$(basename "$f")" "$raw" "$z"
done
printf '  %-48s %10d raw %10d gzipped\n' "all .wasm" "$total_raw" "$total_gz"
for f in "$DIST"/*.js "$DIST"/index.html "$DIST"/fmperf.html; do
  [ -f "$f" ] && printf '  %-48s %10d raw %10d gzipped\n' "$(basename "$f")" "$(stat -c %s "$f")" "$(gz "$f")"
done
echo "  (first view: index.html, which holds the default page drawn ahead, and its boot script; a permalink also loads first-view-*.wasm; the page loads fmperf-web-*.wasm; the offline file holds everything)"

if ! command -v twiggy >/dev/null 2>&1 && [ "$INSTALL" = 1 ]; then
  echo "== installing twiggy (cargo install --locked twiggy)" >&2
  cargo install --locked twiggy
fi
if command -v twiggy >/dev/null 2>&1; then
  for f in "$DIST"/*.wasm; do
    # The shipped file has no name section (wasm-opt drops it): its items are code[N] and data[N];
    # the largest data segments are the compiled-in data.
    echo "== twiggy top -n $TOP $(basename "$f") (shallow bytes of the shipped file)"
    twiggy top -n "$TOP" "$f" || true
  done
  named="${CARGO_TARGET_DIR:-$ROOT/target}/wasm32-unknown-unknown/web/fmperf-web.wasm"
  if [ -f "$named" ]; then
    echo "== by crate and module (rustc's output before wasm-bindgen and wasm-opt, which still has names: read the shares)"
    python3 "$ROOT/scripts/wasm-breakdown.py" "$named" "$TOP"
    echo "== twiggy top -n $TOP of the same (largest single items)"
    twiggy top -n "$TOP" "$named" | cut -c1-160 || true
  fi
else
  echo "== twiggy not installed: no breakdown (scripts/measure-size.sh --install-twiggy, or cargo install twiggy)"
fi

if [ "$TIME" = 1 ]; then
  echo "== time to first result (tests/bench/first-result.mjs, $RUNS cold runs each)"
  node "$ROOT/tests/bench/first-result.mjs" --runs "$RUNS" --dist "$DIST"
fi
