#!/usr/bin/env bash
# README command 1: install what is missing, build the site, serve it on http://127.0.0.1:8080
# (Ctrl-C stops the server). PORT=... overrides the port.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
PORT="${PORT:-8080}"
echo "fmperf: serving $ROOT/dist on http://127.0.0.1:$PORT/ (Ctrl-C to stop)" >&2
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$ROOT/dist"
