#!/usr/bin/env bash
# Builds the web app: dist/ (Trunk release build, relative URLs, hashed names, an external boot
# script for strict CSP) and dist/fmperf.html (one self-contained file for offline use).
# Assumes scripts/setup.sh has run (serve.sh and test.sh run it first).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$ROOT/tests/node_modules/.bin:$PATH"
cd "$ROOT"
trunk build --release
python3 "$ROOT/scripts/postbuild.py" "$ROOT/dist"
wasm=$(ls dist/*_bg.wasm)
printf 'wasm: %s bytes raw, %s bytes gzipped\n' "$(stat -c %s "$wasm")" "$(gzip -9 -c "$wasm" | wc -c)" >&2
