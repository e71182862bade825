// Shared set-up of the browser end-to-end tests: serve a folder on 127.0.0.1 with Python's static
// server, launch Debian Chromium through playwright-core, record console errors, save screenshots.
import { before, after } from 'node:test';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '..', '..');
export const DIST = process.env.DIST ?? path.join(ROOT, 'dist');
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
/** Llama 3 8B on 64 H100 in extended mode: a scenario small enough to re-search many times quickly
 * (the sensitivity strip, the cost views, the workers' queue). */
export const SMALL_SCENARIO = '?view=explorer&mode=extended&model=llama3-8b&system=nvidia_h100_sxm5_80gb&domain=8&gpus=64&batch=512&strategies=1d,2d-seqp&top=10';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** A free TCP port on 127.0.0.1. */
async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Serves `dir` on 127.0.0.1; returns { base, stop }. */
export async function serve(dir = DIST) {
  const port = await freePort();
  const proc = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir], {
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(base)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  return { base, stop: () => proc.kill() };
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml' };

/** Static server on 127.0.0.1 serving `root` under `prefix`, optionally with a CSP header (Python's
 * server sends none). */
export async function staticServer(root, { prefix = '/', csp = null } = {}) {
  const server = createHttpServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (!url.pathname.startsWith(prefix)) {
      res.writeHead(404).end('not here');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(prefix.length));
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      const headers = { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' };
      if (csp) headers['content-security-policy'] = csp;
      res.writeHead(200, headers).end(body);
    } catch {
      res.writeHead(404).end('missing');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { base: `http://127.0.0.1:${port}${prefix}`, origin: `http://127.0.0.1:${port}`, stop: () => server.close() };
}

/** Launches headless Chromium. */
export async function launch() {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** A new page that records console errors and page errors into `page.errors`. */
export async function newPage(browser, options = {}) {
  const page = await browser.newPage({ acceptDownloads: true, viewport: { width: 1280, height: 900 }, ...options });
  page.errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') page.errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => page.errors.push(`pageerror: ${err.message}`));
  return page;
}

/** Saves a full-page screenshot under tests/artifacts/. */
export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** One server and one browser per test file: started before its first test, closed after its
 * last; `set(server, browser)` hands them to the file. */
export function sharedBrowser(set) {
  let server;
  let browser;
  before(async () => {
    server = await serve();
    browser = await launch();
    set(server, browser);
  });
  after(async () => {
    await browser?.close();
    server?.stop();
  });
}

/** Waits until the explorer's search for the URL's scenario has finished: no progress shown, the
 * results current, and a result row (or the "nothing fits" answer) on the page. */
export async function resultsSettled(page, timeout = 90_000) {
  await page.waitForFunction(() => !document.querySelector('.run-status') && !document.querySelector('.results-body.stale')
    && document.querySelector('table.results tbody tr, .nothing-fits'), null, { timeout });
}

/** axe-core's violations of any impact on the page (injected), one line each: impact, rule, help
 * and the first three nodes. */
export async function axeViolations(page) {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  return page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
}
