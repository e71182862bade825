#!/usr/bin/env bash
# Builds the web app: dist/ (Trunk release build, relative URLs, hashed names, an external boot
# script for strict CSP), the explorer's first view (crates/first-view: a small module that draws
# the first results before the page's own module has loaded) and dist/fmperf.html (one
# self-contained file for offline use).
# Assumes scripts/setup.sh has run (serve.sh and test.sh run it first).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$ROOT/tests/node_modules/.bin:$PATH"
cd "$ROOT"
# The page's module: Trunk runs wasm-opt -Oz and, through index.html's data-wasm-opt-params, a
# second -Oz round (1.4 KB gzipped smaller, as the first view's second round below),
# --low-memory-unused (see the first view's wasm-opt below), then GUFA (binaryen's whole-module
# flow analysis: a value that can only be one constant becomes that constant, code no value reaches
# goes; sound, not run by -Oz for its compile time) and a third -Oz round (342 B gzipped together),
# and --strip-producers --strip-target-features: the `producers` and `target_features` custom
# sections (toolchain names and versions, the features the module was compiled with; 265 B) that
# no browser and no script of the page reads (196 B gzipped; issue 33).
trunk build --release
# The first view: release profile (fmperf-core at opt-level 3: its search is what the visitor
# waits for), the same wasm-bindgen and wasm-opt as Trunk's; postbuild.py hashes its names and
# loads it from the boot script.
cargo build --offline --release --target wasm32-unknown-unknown -p fmperf-first-view --lib
wasm-bindgen --target web --no-typescript --out-dir dist --out-name first-view \
  "${CARGO_TARGET_DIR:-$ROOT/target}/wasm32-unknown-unknown/release/fmperf_first_view.wasm"
# Two rounds of -Oz: the second finds 0.6 KB (gzipped) more to fold after the first.
# --low-memory-unused: wasm-opt may fold a constant added to an address into the load's or store's
# offset (binaryen src/passes/OptimizeAddedConstants.cpp: "This requires the assumption that low
# memory is unused, so that we can replace an add (which might wrap) with a load/store offset
# (which does not)"; constants under 1024 only). Rust's addresses never wrap (the stack sits below
# 1 MiB, the data above it, and LLVM's in-bounds address arithmetic does not overflow), so the
# result is the same program: the page's module 5.1 KB gzipped smaller (issue 33).
wasm-opt -Oz -Oz --low-memory-unused dist/first-view_bg.wasm -o dist/first-view_bg.wasm
# The default page's first view, drawn now (natively, the host-test profile the test command has
# built already), for index.html: a visitor without a query sees it before any WebAssembly loads.
cargo run --offline --quiet --profile host -p fmperf-first-view --bin first-view-html -- "" > dist/first-view-ahead.html
python3 "$ROOT/scripts/postbuild.py" "$ROOT/dist"
for wasm in dist/*.wasm; do
  printf 'wasm %s: %s bytes raw, %s bytes gzipped\n' "$(basename "$wasm")" "$(stat -c %s "$wasm")" "$(gzip -9 -c "$wasm" | wc -c)" >&2
done
# Neither module larger than its bar (scripts/size-bars.txt, issue 33): fails the build otherwise.
"$ROOT/scripts/check-sizes.sh" "$ROOT/dist"
