// The page's Mixture-of-Experts search time (issue 29 §4), as a user sees it, in headless
// Chromium: DeepSeek-V3 on 2,048 H800 SXM5 (domain 8) with the model's own global batch (15,360),
// strategies 1d + 2d-seqp, top 10 (72,984 candidates), in extended mode.
//
// Each run opens a fresh browser page and measures
// - `first`: wall time from the navigation to the results shown (the search settled: no progress
//   line, the results current, a row on the page), and the time the page states under its results
//   ("in N ms", from the search's start);
// - `edits`: then `--edits` edits of the batch field (16,384, then 15,360 again, alternating), each
//   timed from the keystroke to its results shown (this includes the field's 250 ms debounce
//   before the URL is written and the search starts), and the page's stated time.
// Prints one JSON line per run and a summary (median and range of each figure) with the CPU
// seconds the browser spent (`browser_cpu_s`: renderer and workers, whatever else the machine
// runs). A benchmark, not a test: it measures and prints; it fails only when the page never settles
// or logs an error.
//
// Usage (after ./scripts/build.sh; from the repository root):
//   node tests/bench/moe-page-time.mjs [--runs 5] [--edits 2] [--base http://127.0.0.1:8751/] [--query '?…']
// (default: serves dist/ itself on a free port).
import { execSync } from 'node:child_process';
import { launch, newPage, serve } from '../e2e/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}
const RUNS = Number(arg('runs', '5'));
const EDITS = Number(arg('edits', '2'));
const QUERY = arg('query', '?view=explorer&mode=extended&model=deepseek-v3&system=nvidia_h800_sxm5_80gb&domain=8'
  + '&gpus=2048&batch=&strategies=1d,2d-seqp&top=10');
const BATCHES = ['16384', '15360'];

/** CPU seconds (user + system) of this process's descendants (the browser, its renderer and its
 *  workers), from `ps` (so the figure does not depend on how busy the machine is). */
function browserCpuS() {
  const rows = execSync('ps -eo pid=,ppid=,times=', { encoding: 'utf8' }).trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number));
  const kids = new Map();
  for (const [pid, ppid] of rows) kids.set(ppid, [...(kids.get(ppid) ?? []), pid]);
  const times = new Map(rows.map(([pid, , t]) => [pid, t]));
  let total = 0;
  const walk = (pid) => (kids.get(pid) ?? []).forEach((k) => { total += times.get(k) ?? 0; walk(k); });
  walk(process.pid);
  return total;
}

const server = arg('base', null) ? null : await serve();
const base = arg('base', null) ?? server.base;
const browser = await launch();

const summaryText = (page) => page.evaluate(() => document.querySelector('.results-card .summary')?.textContent ?? '');
const stated = async (page) => Number((await summaryText(page)).match(/in ([\d,]+) ms/)?.[1]?.replace(/,/g, '') ?? NaN);
/** Resolves once the search of the URL's scenario is shown and its summary differs from `before`. */
const settled = (page, before) => page.waitForFunction((before) => !document.querySelector('.run-status')
  && !document.querySelector('.results-body.stale') && document.querySelector('table.results tbody tr')
  && (document.querySelector('.results-card .summary')?.textContent ?? '') !== before, before,
{ timeout: 300_000, polling: 20 });

const firsts = [];
const edits = [];
for (let r = 0; r < RUNS; r++) {
  const page = await newPage(browser);
  const cpu0 = browserCpuS();
  const t0 = Date.now();
  await page.goto(base + QUERY);
  await settled(page, '');
  const first = { wall_ms: Date.now() - t0, stated_ms: await stated(page), browser_cpu_s: browserCpuS() - cpu0 };
  firsts.push(first);
  const run = { run: r + 1, first, edits: [] };
  for (let e = 0; e < EDITS; e++) {
    const before = await summaryText(page);
    const c0 = browserCpuS();
    const t = Date.now();
    await page.locator('input#ex-batch').fill(BATCHES[e % BATCHES.length]);
    await settled(page, before);
    const edit = { wall_ms: Date.now() - t, stated_ms: await stated(page), browser_cpu_s: browserCpuS() - c0 };
    edits.push(edit);
    run.edits.push(edit);
  }
  if (page.errors.length) throw new Error(`page errors: ${page.errors.join('; ')}`);
  console.log(JSON.stringify(run));
  await page.close();
}
await browser.close();
server?.stop();

/** Median and range of `key` over `xs`. */
function stats(xs, key) {
  const s = xs.map((x) => x[key]).sort((a, b) => a - b);
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return `median ${Math.round(mid * 100) / 100} (${Math.round(s[0] * 100) / 100}–${Math.round(s[s.length - 1] * 100) / 100})`;
}
for (const [what, xs] of [['first search', firsts], ['edits', edits]]) {
  if (xs.length) {
    console.log(`${what} (${xs.length}): wall ms ${stats(xs, 'wall_ms')}; stated ms ${stats(xs, 'stated_ms')}; browser CPU s ${stats(xs, 'browser_cpu_s')}`);
  }
}
