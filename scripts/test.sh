#!/usr/bin/env bash
# README command 2: install what is missing, then run every test:
#   1. host tests of core, cli and chart (cargo test; golden outputs and measured runs are in the repository)
#   2. a wasm32 build of fmperf-core (it must stay free of host-only code)
#   3. the Trunk release build of the web app
#   4. the browser end-to-end tests (node:test + playwright-core + Debian Chromium) on the built site
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
export PATH="$HOME/.cargo/bin:$ROOT/tests/node_modules/.bin:$PATH"
cd "$ROOT"
step() { printf '\n== test: %s\n' "$*" >&2; }

step "host tests (cargo test)"
cargo test --profile host --quiet

step "fmperf-core for wasm32"
cargo build --release --quiet -p fmperf-core --target wasm32-unknown-unknown

step "web app (Trunk release build)"
"$ROOT/scripts/build.sh"

step "browser end-to-end tests"
(cd tests && node --test --test-concurrency=1 e2e/)
