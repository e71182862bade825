#!/usr/bin/env python3
"""Post-processes Trunk's dist/ for strict hosting and offline use.

1. Moves Trunk's inline module loader out of dist/index.html into dist/boot-<hash>.js, so that the
   page runs under `Content-Security-Policy: script-src 'self' 'wasm-unsafe-eval'` (no inline script).
2. Writes dist/fmperf-element.js (the <fmperf-explorer> custom element), dist/embed.html (how to
   embed, with live examples) and dist/fmperf-worker.js (the Web Worker that runs searches and
   sweeps on the page's own WebAssembly), filling in the hashed file names.
3. Hashes the names of the explorer's first view (dist/first-view.js and first-view_bg.wasm, built
   by build.sh from crates/first-view) and puts it at the start of the boot script: on an explorer
   URL the boot script loads that small module first, starts fetching the page's module, draws the
   first results into `<div id="first-view">` (a closed shadow root with the page's styles) and
   only then starts the page, which removes the first view once it shows its own (src/first_view.rs).
   Trunk's preloads of the page's module are replaced by preloads of the first view.
4. Writes dist/fmperf.html: one self-contained file (CSS, JS glue and the WebAssembly inlined)
   that works when opened from disk (file://), where module scripts and wasm fetches are blocked.
   The WebAssembly is inlined gzip-compressed (level 9, no timestamp: the file is reproducible) and
   the page inflates it with the browser's own `DecompressionStream("gzip")` (Chromium 80+,
   Firefox 113+, Safari 16.4+); a browser without it gets a message instead of a blank page.
   The compressed bytes are stored as they are, not in base64 (+33 %): the file is declared
   windows-1252, a single-byte encoding in which every byte is one character, so the bytes sit in
   a non-executed <script> element and the page maps its characters back to bytes. Four bytes
   are escaped (two bytes each, +1.6 % on compressed data): NUL and CR, which the HTML parser
   would replace or normalise, "<", which could end the element, and the escape byte itself. All
   other text of the file is ASCII (non-ASCII characters of the HTML, CSS and JS are written as
   entities and escapes), so the declared encoding changes nothing else; the page's URLs are
   percent-encoded ASCII.

Usage: postbuild.py DIST_DIR
"""
import gzip
import json
import hashlib
import pathlib
import re
import sys


def die(msg: str) -> None:
    print(f"postbuild: {msg}", file=sys.stderr)
    sys.exit(1)


# The single file's payload escape (see 3. above): byte -> the byte after ESCAPE that stands for it.
ESCAPE = 0x01
ESCAPED = {0x00: 0x30, 0x0D: 0x31, 0x3C: 0x32, ESCAPE: 0x33}


def escape_payload(data: bytes) -> bytes:
    """The bytes with NUL, CR, "<" and the escape byte written as two bytes each."""
    out = bytearray()
    for b in data:
        code = ESCAPED.get(b)
        if code is None:
            out.append(b)
        else:
            out += bytes((ESCAPE, code))
    return bytes(out)


def unescape_payload(data: bytes) -> bytes:
    """The inverse of escape_payload (what the page's loader does), for the build's own check."""
    back = {code: b for b, code in ESCAPED.items()}
    out, i = bytearray(), 0
    while i < len(data):
        if data[i] == ESCAPE:
            out.append(back[data[i + 1]])
            i += 2
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


def ascii_html(text: str) -> str:
    return "".join(c if ord(c) < 128 else f"&#x{ord(c):x};" for c in text)


def ascii_css(text: str) -> str:
    # A CSS escape ends at the first space after its hex digits (consumed), in strings and names.
    return "".join(c if ord(c) < 128 else f"\\{ord(c):x} " for c in text)


def ascii_js(text: str) -> str:
    out = []
    for c in text:
        if ord(c) < 128:
            out.append(c)
        else:
            # UTF-16 code units, valid in strings, templates, regular expressions and names.
            units = c.encode("utf-16-be")
            out.extend(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
    return "".join(out)


# What the boot script does first (see 3. in the module documentation). `__FV_JS__`, `__FV_WASM__`
# and `__PAGE_WASM__` are the hashed names. A URL without a query shows the first view drawn at
# build time (`<template id="first-view-ahead">`, see FIRST_VIEW_SHOW); any other explorer URL
# has the first view's module draw it, giving up after FIRST_VIEW_BUDGET_MS [ms] of searching (the
# page then searches with progress and a cancel button).
FIRST_VIEW_BUDGET_MS = 800
# Shows a first view (a DocumentFragment) in a closed shadow root `#first-view` with copies of the
# page's stylesheets; shared by the boot script and the offline file's loader.
FIRST_VIEW_SHOW = """function fmperfShowFirstView(content) {
  const host = document.createElement('div');
  host.id = 'first-view';
  const root = host.attachShadow({ mode: 'closed' });
  try {
    root.adoptedStyleSheets = [...document.styleSheets].map((sheet) => {
      const copy = new CSSStyleSheet();
      copy.replaceSync([...sheet.cssRules].map((rule) => rule.cssText).join('\\n'));
      return copy;
    });
  } catch (e) {
    for (const link of document.querySelectorAll('link[rel="stylesheet"]')) root.append(link.cloneNode());
  }
  root.append(content);
  host.dataset.rows = String(root.querySelectorAll('table.results tbody tr').length);
  document.body.prepend(host);
}
function fmperfFirstViewAhead() {
  const ahead = document.getElementById('first-view-ahead');
  if (!ahead) return false;
  ahead.remove();
  // Drawn for the default page: no query, or only `view=explorer` (not URLSearchParams.size,
  // which Safari before 17 lacks).
  const params = new URLSearchParams(location.search);
  if (params.get('view') === 'explorer') params.delete('view');
  if ([...params.keys()].length > 0) return false;
  fmperfShowFirstView(ahead.content);
  return true;
}
"""
FIRST_VIEW_PRELUDE = FIRST_VIEW_SHOW + """// The explorer's first view (crates/first-view): the first results before the page's own module has
// loaded; the page removes it once it shows its own (src/first_view.rs).
let fmperfPageWasm;
try {
  const view = new URLSearchParams(location.search).get('view');
  if (fmperfFirstViewAhead()) {
    fmperfPageWasm = fetch('./__PAGE_WASM__');
  } else if (view === null || view === 'explorer') {
    const firstView = await import('./__FV_JS__');
    await firstView.default({ module_or_path: './__FV_WASM__' });
    let store = null;
    try { store = localStorage.getItem(firstView.store_key()); } catch (e) { /* no storage here */ }
    fmperfPageWasm = fetch('./__PAGE_WASM__');
    const html = firstView.first_view(location.search, store, __BUDGET__);
    if (html) {
      const template = document.createElement('template');
      template.innerHTML = html;
      fmperfShowFirstView(template.content);
    }
  }
} catch (e) {
  console.warn('fmperf: no first view', e);
}
"""


def first_view(dist: pathlib.Path, html: str, glue: pathlib.Path, wasm: pathlib.Path) -> str:
    """Hashes the first view's names, puts its loader at the start of the boot script, and swaps
    Trunk's preloads of the page's module for preloads of the first view. Returns index.html."""
    fv_js, fv_wasm = dist / "first-view.js", dist / "first-view_bg.wasm"
    fv_ahead = dist / "first-view-ahead.html"
    if not fv_js.exists() or not fv_wasm.exists() or not fv_ahead.exists():
        die(f"the first view ({fv_js.name}, {fv_wasm.name}, {fv_ahead.name}) is missing: build.sh builds it")
    ahead = fv_ahead.read_text(encoding="utf-8")
    fv_ahead.unlink()
    if "</template" in ahead or "<script" in ahead:
        die("the first view drawn ahead cannot sit in a <template>")
    digest = hashlib.sha256(fv_js.read_bytes() + fv_wasm.read_bytes()).hexdigest()[:16]
    js_name, wasm_name = f"first-view-{digest}.js", f"first-view-{digest}_bg.wasm"
    for old in dist.glob("first-view-*"):
        old.unlink()
    fv_js.rename(dist / js_name)
    fv_wasm.rename(dist / wasm_name)
    m = re.search(r'<script type="module" src="\./(boot-[0-9a-f]+\.js)"></script>', html)
    if not m:
        die("no boot script in index.html")
    boot = (dist / m.group(1)).read_text(encoding="utf-8")
    # The page's glue is imported when the page starts, not before the module's body runs (a static
    # import would be fetched and evaluated before the first view could start).
    static = re.compile(r"import init, \* as bindings from '\./" + re.escape(glue.name) + r"';\n")
    if not static.search(boot):
        die(f"the boot script does not import {glue.name} as expected: {boot[:300]!r}")
    boot = static.sub(
        f"const bindings = await import('./{glue.name}');\nconst init = bindings.default;\n", boot, count=1
    )
    path = f"module_or_path: '/{wasm.name}'"
    rel = f"module_or_path: './{wasm.name}'"
    target = rel if rel in boot else path if path in boot else None
    if target is None:
        die(f"the boot script does not load {wasm.name} as expected: {boot[:400]!r}")
    quoted = target[len("module_or_path: "):]
    boot = boot.replace(target, f"module_or_path: fmperfPageWasm ?? {quoted}", 1)
    prelude = (
        FIRST_VIEW_PRELUDE.replace("__FV_JS__", js_name)
        .replace("__FV_WASM__", wasm_name)
        .replace("__PAGE_WASM__", wasm.name)
        .replace("__BUDGET__", str(FIRST_VIEW_BUDGET_MS))
    )
    boot = prelude + boot
    name = f"boot-{hashlib.sha256(boot.encode()).hexdigest()[:16]}.js"
    (dist / m.group(1)).unlink()
    (dist / name).write_text(boot, encoding="utf-8")
    html = html.replace(m.group(0), f'<script type="module" src="./{name}"></script>')
    # Preloads: both glues (small), no module: the prelude fetches the page's module once the first
    # view is on its way (a preload of its 3 MB competed with the first view's and with the boot
    # script: 9 cold loads of a permalink took a median 704 ms to the first row with it, 492 ms
    # without; the default page 230 and 168 ms), and the default page (drawn ahead) needs no first
    # view module.
    html = re.sub(r'\s*<link rel="(modulepreload|preload)"[^>]*>', "", html)
    preloads = (
        f'\n  <link rel="modulepreload" href="./{glue.name}">'
        f'\n  <link rel="modulepreload" href="./{js_name}">\n'
    )
    html = re.sub(r"\s*</head>", lambda _: preloads + "</head>", html, count=1)
    # The default page's first view, drawn at build time (build.sh), for the prelude to show.
    html = html.replace("<body>", f'<body>\n  <template id="first-view-ahead">{ahead}</template>', 1)
    return html


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

    # 3. The first view, ahead of the page in the boot script.
    html = first_view(dist, html, glue, wasm)
    index.write_text(html, encoding="utf-8")

    # 4. Single self-contained file.
    glue_js = glue.read_text(encoding="utf-8")
    if re.search(r"^\s*import\s", glue_js, re.M):
        die("the wasm-bindgen glue imports other modules; the single-file bundle cannot inline them")
    wasm_gz = gzip.compress(wasm.read_bytes(), compresslevel=9, mtime=0)
    payload = escape_payload(wasm_gz)
    if unescape_payload(payload) != wasm_gz or any(b in payload for b in (0x00, 0x0D, 0x3C)):
        die("the escaped WebAssembly payload does not round-trip")
    single = html
    single = re.sub(r'<script type="module" src="[^"]*"></script>', "", single)
    single = re.sub(r'<link rel="(modulepreload|preload)"[^>]*>', "", single)
    styles = "".join(p.read_text(encoding="utf-8") for p in css)
    single = re.sub(r'<link rel="stylesheet"[^>]*>\s*', "", single)
    if '<meta charset="utf-8">' not in single:
        die("index.html has no <meta charset=\"utf-8\"> to replace")
    single = single.replace(
        '<meta charset="utf-8">',
        '<meta charset="windows-1252">\n  <meta name="fmperf-bundle" content="single-file">',
        1,
    )
    single = ascii_html(single)
    single = single.replace("</head>", "<style>\n" + ascii_css(styles) + "</style>\n</head>", 1)
    # The loader maps the payload's characters back to bytes: windows-1252 decodes 0x80-0x9F to
    # other code points (U+20AC ...), which the browser's own decoder tells; every other byte is
    # its own code point. Then it undoes the escapes and inflates.
    decode = (
        "function fmperfBytes(id) {\n"
        "  const text = document.getElementById(id).textContent;\n"
        "  const back = new Uint8Array(0x2200);\n"
        "  for (let b = 0; b < 256; b++) back[b] = b;\n"
        "  const c1 = new TextDecoder('windows-1252').decode(Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i));\n"
        "  for (let i = 0; i < 32; i++) back[c1.charCodeAt(i)] = 0x80 + i;\n"
        "  const escaped = [0x00, 0x0d, 0x3c, 0x01];\n"
        "  const bytes = new Uint8Array(text.length);\n"
        "  let n = 0;\n"
        "  for (let i = 0; i < text.length; i++) {\n"
        "    const b = back[text.charCodeAt(i)];\n"
        "    bytes[n++] = b === 0x01 ? escaped[text.charCodeAt(++i) - 0x30] : b;\n"
        "  }\n"
        "  return bytes.subarray(0, n);\n"
        "}"
    )
    loader = (
        '<script type="module">\n'
        + ascii_js(glue_js)
        + "\n"
        + decode
        + "\nif (typeof DecompressionStream !== 'function') {\n"
        + "  document.body.insertAdjacentHTML('afterbegin', '<p class=\"notice error\" role=\"alert\">"
        + "This offline copy of fmperf needs a browser with DecompressionStream (Chromium 80, Firefox 113, "
        + "Safari 16.4 or newer).</p>');\n"
        + "  throw new Error('fmperf: DecompressionStream is not available');\n"
        + "}\n"
        + ascii_js(FIRST_VIEW_SHOW)
        + "try { fmperfFirstViewAhead(); } catch (e) { console.warn('fmperf: no first view', e); }\n"
        + "const fmperfWasmGz = fmperfBytes('fmperf-wasm-gz');\n"
        + f"if (fmperfWasmGz.length !== {len(wasm_gz)}) throw new Error('fmperf: the inlined WebAssembly is damaged');\n"
        + "const fmperfWasm = await new Response(new Blob([fmperfWasmGz]).stream()"
        + ".pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();\n"
        + "await __wbg_init({ module_or_path: fmperfWasm });\n</script>\n"
    )
    head, tail = single.split("</body>", 1)
    data = (
        head.encode("ascii")
        + b'<script type="application/octet-stream" id="fmperf-wasm-gz">'
        + payload
        + b"</script>\n"
        + loader.encode("ascii")
        + b"</body>"
        + tail.encode("ascii")
    )
    if data.find(b"windows-1252") > 1024:
        die("the charset declaration is not in the first 1024 bytes")
    (dist / "fmperf.html").write_bytes(data)
    print(f"postbuild: {index} (external boot script), {dist / 'fmperf.html'} ({len(data)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
