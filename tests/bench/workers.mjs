// The paper's strong-scaling preset (studies view, panel gpt3_1T: 117 points, 5.4 M candidates) in
// headless Chromium: on the page's Web Workers against the time slices on the main thread. A
// benchmark, not a test: it measures and prints, and fails only when the page never finishes.
//
// Usage (after ./scripts/build.sh; from the repository root):
//   node tests/bench/workers.mjs [--runs 5] [--modes auto,off] [--dist dist] [--json]
//
// Modes are values of the page's debug switch localStorage["fmperf.workers"]: `auto` (not set: one
// worker per core, at most 8), `off` (time slices on the main thread), or a worker count `N`.
// Runs alternate between the modes (so a change of the machine's load hits all alike); each opens
// a new browser context (cold cache, a new worker pool) and reads:
//   - sweep: the page's own time from starting the sweep to its result (the "in X s" it shows;
//     includes starting the workers, running the chunks and merging them);
//   - warm: the same sweep again in the same page once the workers run (the panel is switched to
//     vit_era5 and back), so without the workers' start;
//   - cpu: CPU seconds of every Chromium process during the warm sweep (from /proc): the work done
//     on all cores together; cpu / warm is the number of cores the sweep kept busy.
// The load average and the cores the page sees (navigator.hardwareConcurrency) are printed with
// the figures: on a shared machine wall times depend on what else runs.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIST, launch, serve } from '../e2e/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}
const RUNS = Number(arg('runs', '5'));
const MODES = arg('modes', 'auto,off').split(',');
const dist = path.resolve(arg('dist', DIST));
const asJson = process.argv.includes('--json');
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a positive integer, got ${RUNS}`);
if (!existsSync(path.join(dist, 'fmperf-worker.js'))) throw new Error(`${dist}/fmperf-worker.js is missing: run ./scripts/build.sh`);

/** CPU seconds (user + system) of this process's descendants (the browser and its children). */
function childrenCpuSeconds() {
  const parent = new Map();
  const ticks = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(pid, f[1]);
      ticks.set(pid, Number(f[11]) + Number(f[12]));
    } catch {}
  }
  const mine = (pid) => {
    for (let p = pid; p && p !== '0' && p !== '1'; p = parent.get(p)) if (p === String(process.pid)) return true;
    return false;
  };
  let total = 0;
  for (const [pid, t] of ticks) if (pid !== String(process.pid) && mine(pid)) total += t;
  return total / 100; // USER_HZ = 100 on Linux
}

const seconds = (text) => Number(/ in ([\d.]+) s$/.exec(text)[1]);

async function once(browser, base, mode) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  if (mode !== 'auto') await context.addInitScript((m) => localStorage.setItem('fmperf.workers', m), mode);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}?view=studies&preset=strong-scaling&panel=gpt3_1T`);
  const summary = page.locator('#sweep-summary');
  await summary.waitFor({ timeout: 120_000 });
  const cold = seconds(await summary.textContent());
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  // Warm: the vit_era5 panel, then gpt3_1T again in the same page.
  await page.click('button[data-preset="strong-scaling"][data-panel="vit_era5"]');
  await page.waitForFunction(() => /^31 of 31/.test(document.querySelector('#compare-summary')?.textContent ?? ''), null, { timeout: 120_000 });
  await page.waitForTimeout(200);
  const cpu0 = childrenCpuSeconds();
  await page.click('button[data-preset="strong-scaling"][data-panel="gpt3_1T"]');
  await page.waitForFunction(() => /^56 of 56/.test(document.querySelector('#compare-summary')?.textContent ?? ''), null, { timeout: 120_000 });
  const cpu = childrenCpuSeconds() - cpu0;
  const warm = seconds(await summary.textContent());
  await context.close();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  return { cold, warm, cpu, cores };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const server = await serve(dist);
const browser = await launch();
const runs = Object.fromEntries(MODES.map((m) => [m, []]));
const load0 = os.loadavg()[0];
try {
  for (let i = 0; i < RUNS; i++) for (const m of MODES) runs[m].push(await once(browser, server.base, m));
} finally {
  await browser.close();
  server.stop();
}
const load1 = os.loadavg()[0];
const out = {
  cores: runs[MODES[0]][0].cores,
  load_average: [load0, load1],
  modes: Object.fromEntries(
    MODES.map((m) => [m, {
      runs: runs[m].length,
      sweep_s: median(runs[m].map((r) => r.cold)),
      warm_s: median(runs[m].map((r) => r.warm)),
      cpu_s: median(runs[m].map((r) => r.cpu)),
      all_sweep_s: runs[m].map((r) => r.cold),
    }]),
  ),
};
if (asJson) {
  console.log(JSON.stringify(out));
} else {
  console.log(`strong-scaling preset (gpt3_1T panel), ${out.cores} cores seen by the page, load average ${load0.toFixed(1)} → ${load1.toFixed(1)}`);
  for (const [m, s] of Object.entries(out.modes)) {
    const name = m === 'auto' ? 'workers (one per core)' : m === 'off' ? 'time slices (main thread)' : `${m} worker(s)`;
    console.log(`${name.padEnd(26)}: median ${s.sweep_s.toFixed(2)} s (warm pool ${s.warm_s.toFixed(2)} s), ` +
      `${s.cpu_s.toFixed(2)} CPU s warm (${(s.cpu_s / s.warm_s).toFixed(2)} cores busy); cold runs ${s.all_sweep_s.map((x) => x.toFixed(2)).join(', ')} s`);
  }
}
