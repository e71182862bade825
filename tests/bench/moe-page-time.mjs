// The page's Mixture-of-Experts search time (issue 29 §4): DeepSeek-V3 on 1,024 H100 SXM5 with a
// global batch of 15,360, every strategy, top 10 (66,476 candidates), in headless Chromium. Prints
// the time the page states under its results ("in N ms") for the first search (time slices on
// the main thread while the workers start; an MoE search waits for them) and the wall time from
// the navigation to the results. With the CPU seconds the browser spent meanwhile
// (`browser_cpu_s`: renderer and workers, whatever else the machine runs).
// Usage: node tests/bench/moe-page-time.mjs [BASE_URL]   (default: serves dist/ itself)
import { execSync } from 'node:child_process';
import { launch, newPage, serve } from '../e2e/harness.mjs';

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

const QUERY = '?view=explorer&mode=extended&model=deepseek-v3&system=nvidia_h100_sxm5_80gb&domain=8&gpus=1024'
  + '&batch=15360&strategies=1d,2d,2d-seqp&top=10';

const server = process.argv[2] ? null : await serve();
const base = process.argv[2] ?? server.base;
const browser = await launch();
const page = await newPage(browser);
const settled = () => page.waitForFunction(() => !document.querySelector('.run-status')
  && !document.querySelector('.results-body.stale') && document.querySelector('table.results tbody tr'), null,
{ timeout: 300_000, polling: 50 });
const stated = () => page.evaluate(() => document.querySelector('.results-card .summary')?.textContent.match(/in ([\d,]+) ms/)?.[1]);
const cpu0 = browserCpuS();
const t0 = Date.now();
await page.goto(base + QUERY);
await settled();
const first = { wall_ms: Date.now() - t0, stated_ms: await stated(), browser_cpu_s: browserCpuS() - cpu0 };
console.log(JSON.stringify({ first, errors: page.errors }));
await browser.close();
server?.stop();
