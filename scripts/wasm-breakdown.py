#!/usr/bin/env python3
"""Where the bytes of a WebAssembly module with a name section go, grouped by crate and by module of
fmperf's own crates (fmperf_web::pages::explorer, fmperf_core::sweep, ...), from `twiggy top -f csv`.

Usage: scripts/wasm-breakdown.py FILE.wasm [ROWS]
Run it on the rustc output (target/wasm32-unknown-unknown/web/fmperf-web.wasm, profile `web`), which still
has function names; the shipped file (after wasm-bindgen and wasm-opt) has none. Sizes are before
wasm-opt, so read the shares, not the absolute bytes. Name and wasm-bindgen custom sections (not
shipped) are left out of the total.
"""
import csv
import io
import re
import subprocess
import sys
from collections import defaultdict


def crate_of(path: str) -> list:
    """The path segments of a Rust path, without `[hash]` disambiguators."""
    return [re.sub(r'\[[0-9a-f]+\]$', '', p) for p in path.split('::') if p]


def group(name: str) -> str:
    if name.startswith('data segment') or name.startswith('data['):
        return 'data (constants, compiled-in JSON, strings)'
    if name.startswith('export "__wbindgen_describe') or name.startswith('import '):
        return 'wasm-bindgen descriptors and imports (removed by wasm-bindgen)'
    # `<X as Trait>::f`: the type's crate, or the trait's when the type is a generic parameter.
    m = re.match(r'^<(?:&|\*const |\*mut |mut |dyn )*([^ <>]+)(?:<[^ ]*>)? as ([^ <>]+)', name)
    if m:
        ty, trait = m.group(1), m.group(2)
        path = trait if re.fullmatch(r'[A-Z][A-Za-z0-9]?', ty) or ty.startswith('(') or ty.startswith('[') else ty
    else:
        path = re.split(r'[<>\s]', name.lstrip('<&*( '), maxsplit=1)[0]
    parts = crate_of(path)
    if not parts:
        return name
    crate = parts[0]
    if crate in ('fmperf_web', 'fmperf_core', 'fmperf_chart') and len(parts) > 2:
        sub = parts[1]
        if crate == 'fmperf_web' and sub == 'pages' and len(parts) > 3:
            sub = 'pages::' + parts[2]
        return f'{crate}::{sub}'
    return crate


def main() -> None:
    path = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    text = subprocess.run(['twiggy', 'top', '-n', '1000000', '-f', 'csv', path],
                          check=True, capture_output=True, text=True).stdout
    sizes = defaultdict(int)
    skipped = 0
    for r in csv.DictReader(io.StringIO(text)):
        name, size = r['Name'], int(r['ShallowSize'] or 0)
        if name.startswith('Σ') or name.startswith('...'):
            continue
        if 'function names' in name or name.startswith('custom section'):
            skipped += size
            continue
        sizes[group(name)] += size
    total = sum(sizes.values())
    print(f'{total} bytes of code and data ({skipped} bytes of name/custom sections left out)')
    print(f'{"bytes":>10} {"share":>7}  group')
    for g, s in sorted(sizes.items(), key=lambda kv: -kv[1])[:rows]:
        print(f'{s:>10} {100 * s / total:>6.1f}%  {g}')


if __name__ == '__main__':
    main()
