#!/usr/bin/env python3
"""Post-processes Trunk's dist/ for strict hosting and offline use.

1. Moves Trunk's inline module loader out of dist/index.html into dist/boot-<hash>.js, so that the
   page runs under `Content-Security-Policy: script-src 'self' 'wasm-unsafe-eval'` (no inline script).
2. Writes dist/fmperf-element.js (the <fmperf-explorer> custom element), dist/embed.html (how to
   embed, with live examples) and dist/fmperf-worker.js (the Web Worker that runs searches and
   sweeps on the page's own WebAssembly), filling in the hashed file names.
3. Writes dist/fmperf.html: one self-contained file (CSS, JS glue and the WebAssembly inlined)
   that works when opened from disk (file://), where module scripts and wasm fetches are blocked.
   The WebAssembly is inlined gzip-compressed (level 9, no timestamp: the file is reproducible) in
   base64, and the page inflates it with the browser's own `DecompressionStream("gzip")` (Chromium
   80+, Firefox 113+, Safari 16.4+): about a third of the bytes of the plain base64 module. A
   browser without it gets a message saying so instead of a blank page.

Usage: postbuild.py DIST_DIR
"""
import base64
import gzip
import json
import hashlib
import pathlib
import re
import sys


def die(msg: str) -> None:
    print(f"postbuild: {msg}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    dist = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "dist")
    index = dist / "index.html"
    html = index.read_text(encoding="utf-8")

    glue = [p for p in dist.glob("fmperf-web-*.js")]
    wasm = [p for p in dist.glob("fmperf-web-*_bg.wasm")]
    if len(glue) != 1 or len(wasm) != 1:
        die(f"expected one glue .js and one _bg.wasm in {dist}, found {glue} {wasm}")
    glue, wasm = glue[0], wasm[0]
    # Every stylesheet the page links, in order (main.css first, then one per view).
    css = [dist / href for href in re.findall(r'<link rel="stylesheet" href="\./([^"]+\.css)"', html)]
    if not css or not all(p.exists() for p in css):
        die(f"stylesheets linked by index.html are missing: {css}")

    # 1. External boot script (CSP without 'unsafe-inline').
    inline = re.compile(r'<script type="module">(.*?)</script>', re.S)
    m = inline.search(html)
    if m:
        boot = m.group(1).strip() + "\n"
        name = f"boot-{hashlib.sha256(boot.encode()).hexdigest()[:16]}.js"
        (dist / name).write_text(boot, encoding="utf-8")
        html = html[: m.start()] + f'<script type="module" src="./{name}"></script>' + html[m.end() :]
        index.write_text(html, encoding="utf-8")
    elif "boot-" not in html:
        die("no inline Trunk loader and no boot script in index.html")
    if re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html):
        die("index.html still has an inline script")
    if re.search(r"\son[a-z]+=", html):
        die("index.html has an inline event handler")

    # 2. The custom element script, the embedding documentation page and the worker script (stable
    #    names; they refer to the hashed files).
    public = pathlib.Path(__file__).resolve().parent.parent / "public"
    for name in ("fmperf-element.js", "embed.html", "fmperf-worker.js"):
        text = (public / name).read_text(encoding="utf-8")
        text = (
            text.replace("__GLUE__", glue.name)
            .replace("__WASM__", wasm.name)
            .replace("__CSS_LIST__", json.dumps([p.name for p in css]))
            .replace("__CSS_LINKS__", "\n  ".join(f'<link rel="stylesheet" href="./{p.name}">' for p in css))
        )
        if re.search(r"__[A-Z_]+__", text):
            die(f"unfilled placeholder in {name}")
        (dist / name).write_text(text, encoding="utf-8")

    # 3. Single self-contained file.
    glue_js = glue.read_text(encoding="utf-8")
    if re.search(r"^\s*import\s", glue_js, re.M):
        die("the wasm-bindgen glue imports other modules; the single-file bundle cannot inline them")
    wasm_gz_b64 = base64.b64encode(gzip.compress(wasm.read_bytes(), compresslevel=9, mtime=0)).decode("ascii")
    single = html
    single = re.sub(r'<script type="module" src="[^"]*"></script>', "", single)
    single = re.sub(r'<link rel="(modulepreload|preload)"[^>]*>', "", single)
    styles = "".join(p.read_text(encoding="utf-8") for p in css)
    single = re.sub(r'<link rel="stylesheet"[^>]*>\s*', "", single)
    single = single.replace("</head>", "<style>\n" + styles + "</style>\n</head>", 1)
    # The module is inflated by the browser (no decompressor of ours). Its base64 is decoded by the
    # built-in decoder where the browser has it (Chromium 140+, Firefox 133+, Safari 18.2+), else a
    # plain loop. Not `Uint8Array.from(atob(…), mapFn)`: its callback per byte took 270 ms for the
    # 3.1 MB module in Chromium (the loop 15 ms, the decoder 4 ms), a third of the offline file's
    # time to its first result (issue 13 §2).
    decode = (
        "function fmperfBytes(b64) {\n"
        "  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(b64);\n"
        "  const text = atob(b64);\n"
        "  const bytes = new Uint8Array(text.length);\n"
        "  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);\n"
        "  return bytes;\n"
        "}"
    )
    loader = (
        '<script type="module">\n'
        + glue_js
        + "\n"
        + decode
        + "\nif (typeof DecompressionStream !== 'function') {\n"
        + "  document.body.insertAdjacentHTML('afterbegin', '<p class=\"notice error\" role=\"alert\">"
        + "This offline copy of fmperf needs a browser with DecompressionStream (Chromium 80, Firefox 113, "
        + "Safari 16.4 or newer).</p>');\n"
        + "  throw new Error('fmperf: DecompressionStream is not available');\n"
        + "}\n"
        + "const fmperfWasmGz = fmperfBytes(\""
        + wasm_gz_b64
        + "\");\n"
        + "const fmperfWasm = await new Response(new Blob([fmperfWasmGz]).stream()"
        + ".pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();\n"
        + "await __wbg_init({ module_or_path: fmperfWasm });\n</script>\n"
    )
    single = single.replace("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\">\n  <meta name=\"fmperf-bundle\" content=\"single-file\">", 1)
    single = single.replace("</body>", loader + "</body>", 1)
    (dist / "fmperf.html").write_text(single, encoding="utf-8")
    print(f"postbuild: {index} (external boot script), {dist / 'fmperf.html'} ({len(single)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
