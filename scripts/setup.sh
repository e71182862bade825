#!/usr/bin/env bash
# Installs everything fmperf needs to build and test, idempotently and at pinned versions:
# Debian chromium + chromium-driver and GNU parallel, the wasm32 Rust target, trunk 0.21.14, wasm-bindgen-cli 0.2.130,
# the npm packages under tests/ (binaryen 132 for wasm-opt, playwright-core), and the crates (cargo fetch).
# Sourced by serve.sh and test.sh; safe to run again (it skips what is already in place).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130
export PATH="$HOME/.cargo/bin:$ROOT/tests/node_modules/.bin:$PATH"

step() { printf '\n== setup: %s\n' "$*" >&2; }

# Debian packages: the browser for the end-to-end tests, GNU parallel for the cluster example's test
# (examples/gnu-parallel.sh, crates/cli/tests/cli_cluster.rs).
APT_MISSING=()
command -v chromium >/dev/null 2>&1 || APT_MISSING+=(chromium)
command -v chromedriver >/dev/null 2>&1 || APT_MISSING+=(chromium-driver)
command -v parallel >/dev/null 2>&1 || APT_MISSING+=(parallel)
if [ ${#APT_MISSING[@]} -gt 0 ]; then
  step "Debian ${APT_MISSING[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${APT_MISSING[@]}" >/dev/null
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  step "rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  step "wasm-bindgen-cli $WASM_BINDGEN_VERSION (compiles for several minutes)"
  # Not --locked: its lockfile wants a crate version the registry here lacks.
  cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION"
fi

if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  step "trunk $TRUNK_VERSION (compiles for several minutes)"
  cargo install --locked trunk --version "=$TRUNK_VERSION"
fi

if [ ! -x "$ROOT/tests/node_modules/.bin/wasm-opt" ] || [ ! -d "$ROOT/tests/node_modules/playwright-core" ] \
  || [ "$ROOT/tests/package-lock.json" -nt "$ROOT/tests/node_modules/.package-lock.json" ]; then
  step "npm ci (binaryen 132, playwright-core)"
  (cd "$ROOT/tests" && npm ci --no-audit --no-fund --loglevel=error)
fi

step "cargo fetch"
(cd "$ROOT" && cargo fetch --quiet)
