// Time to first result: the median time from navigation start to the first result row of the
// explorer (visible in the DOM), over N cold-cache runs in headless Chromium, served by a local
// static server and opened from the single offline file (file://). A benchmark, not a test: it
// measures and prints, and fails only when the page never shows a row.
//
// Usage (after ./scripts/build.sh; from the repository root):
//   node tests/bench/first-result.mjs [--runs 15] [--dist dist] [--where server,file] [--query '?…'] [--json]
//
// `--query` opens the page at that query (default: none, the default page, whose first view was
// drawn at build time); a permalink's first view is computed by the first view's own module.
//
// Each run opens a new browser context (empty HTTP cache, no storage) and a new page, installs a
// MutationObserver before any script runs, navigates, and records `performance.now()` (ms since
// navigation start) at two moments: the first result row ("first row": the explorer's first view,
// `#first-view` with `data-rows` > 0, drawn before the page's own module has loaded, or the page's
// own row, whichever comes first) and the page's own first row ("page row": `table.results tbody
// tr` with a non-zero height, the page ready for input). The local server is Python's http.server
// on 127.0.0.1 (as in the end-to-end tests). The offline file has no first view: both are its row.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { launch, serve, DIST } from '../e2e/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}
const RUNS = Number(arg('runs', '15'));
const dist = path.resolve(arg('dist', DIST));
const where = arg('where', 'server,file').split(',');
const asJson = process.argv.includes('--json');
const query = arg('query', '');
if (query !== '' && !query.startsWith('?')) throw new Error(`--query must start with ?, got ${query}`);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a positive integer, got ${RUNS}`);
if (!existsSync(path.join(dist, 'index.html'))) throw new Error(`${dist}/index.html is missing: run ./scripts/build.sh`);

const SELECTOR = 'table.results tbody tr';

/** One cold-cache load of `url`: ms from navigation start to the first result row and to the
 *  page's own first row, `{ first, page }`. */
async function once(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript((selector) => {
    const seen = () => {
      const now = performance.now();
      const row = document.querySelector(selector);
      if (row && row.getBoundingClientRect().height > 0 && window.__pageRowMs === undefined) {
        window.__pageRowMs = now;
      }
      const first = document.getElementById('first-view');
      if (window.__firstRowMs === undefined && (window.__pageRowMs !== undefined || Number(first?.dataset.rows) > 0)) {
        window.__firstRowMs = now;
      }
      return window.__pageRowMs !== undefined;
    };
    const obs = new MutationObserver(() => seen() && obs.disconnect());
    obs.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-rows', 'style', 'class'] });
  }, SELECTOR);
  await page.goto(url);
  await page.waitForFunction(() => window.__pageRowMs !== undefined, null, { timeout: 60_000, polling: 50 });
  const ms = await page.evaluate(() => ({ first: window.__firstRowMs, page: window.__pageRowMs }));
  await context.close();
  if (errors.length) throw new Error(`${url}: page errors: ${errors.join('; ')}`);
  return ms;
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.max(0, Math.round(p * (s.length - 1))))];
  return { runs: s.length, median: q(0.5), p10: q(0.1), p90: q(0.9), min: s[0], max: s[s.length - 1] };
}

const browser = await launch();
const out = {};
/** `RUNS` loads of `url`: statistics of the first row and of the page's row. */
async function runs(url) {
  const first = [];
  const own = [];
  for (let i = 0; i < RUNS; i++) {
    const ms = await once(browser, url);
    first.push(ms.first);
    own.push(ms.page);
  }
  return { first_row: stats(first), page_row: stats(own) };
}
try {
  if (where.includes('server')) {
    const server = await serve(dist);
    try {
      out.server = await runs(server.base + query);
    } finally {
      server.stop();
    }
  }
  if (where.includes('file')) {
    out.file = await runs(pathToFileURL(path.join(dist, 'fmperf.html')).href + query);
  }
} finally {
  await browser.close();
}
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  for (const [k, r] of Object.entries(out)) {
    const f = (x) => `${x.toFixed(0)} ms`;
    for (const [what, s] of [['first row', r.first_row], ['page row ', r.page_row]]) {
      console.log(`${k === 'server' ? 'local server' : 'file://     '} ${what}: median ${f(s.median)} (p10 ${f(s.p10)}, p90 ${f(s.p90)}, min ${f(s.min)}, max ${f(s.max)}; ${s.runs} cold runs)`);
    }
  }
}
