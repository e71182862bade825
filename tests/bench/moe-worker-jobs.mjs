// The page's Mixture-of-Experts search (issue 29 §4) job by job, as its Web Workers run them, timed
// in CPU seconds: a figure that a busy machine moves far less than the page's wall time.
//
// 1. Opens the page on the scenario (headless Chromium, default: DeepSeek-V3 on 2,048 H800, lists
//    1d + 2d-seqp, as tests/bench/moe-page-time.mjs) and records the jobs the page posts to its
//    workers for the first search (one per worker: `navigator.hardwareConcurrency`, or --workers N).
// 2. Runs each job in this process on the page's own WebAssembly module (the same glue and
//    `fmperf_run_job` as public/fmperf-worker.js; V8 like Chromium), one after the other, --runs
//    times, and prints each job's CPU and wall seconds: the slowest job of a run is what the
//    page's search takes on as many free cores as jobs.
//
// Usage (after ./scripts/build.sh; from the repository root):
//   node tests/bench/moe-worker-jobs.mjs [--runs 3] [--workers 2] [--dist DIR] [--query '?…']
//     [--save-jobs FILE | --jobs FILE]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, launch, newPage, serve } from '../e2e/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}
const RUNS = Number(arg('runs', '3'));
const WORKERS = Number(arg('workers', '2'));
const dist = path.resolve(arg('dist', DIST));
const QUERY = arg('query', '?view=explorer&mode=extended&model=deepseek-v3&system=nvidia_h800_sxm5_80gb&domain=8'
  + '&gpus=2048&batch=&strategies=1d,2d-seqp&top=10');

// 1. The jobs, as the page posts them (or as saved by an earlier run's --save-jobs FILE: --jobs FILE).
const jobs = arg('jobs', null) ? JSON.parse(fs.readFileSync(arg('jobs', null), 'utf8')) : await pageJobs();
if (arg('save-jobs', null)) fs.writeFileSync(arg('save-jobs', null), JSON.stringify(jobs));

/** The jobs the page posts to its workers for its first search. */
async function pageJobs() {
  const server = await serve(dist);
  const browser = await launch();
  const page = await newPage(browser);
  await page.addInitScript((workers) => {
    Object.defineProperty(navigator, 'hardwareConcurrency', { get: () => workers });
    window.__jobs = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (msg, ...rest) {
      if (msg && typeof msg.job === 'string') window.__jobs.push(msg.job);
      return post.call(this, msg, ...rest);
    };
  }, WORKERS);
  await page.goto(server.base + QUERY);
  await page.waitForFunction((n) => window.__jobs.length >= n, WORKERS, { timeout: 120_000 });
  const posted = await page.evaluate(() => window.__jobs.slice());
  await browser.close();
  server.stop();
  return posted;
}

// 2. The jobs on the page's module, here.
const glue = fs.readdirSync(dist).find((f) => /^fmperf-web-.*\.js$/.test(f));
const mod = await import(pathToFileURL(path.join(dist, glue)).href);
await mod.default({ module_or_path: fs.readFileSync(path.join(dist, glue.replace(/\.js$/, '_bg.wasm'))) });
for (let r = 0; r < RUNS; r++) {
  const times = jobs.slice(0, WORKERS).map((job) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const answer = mod.fmperf_run_job(job, () => {});
    const cpu = process.cpuUsage(c0);
    if (!answer.startsWith('{"Ok"')) throw new Error(`job failed: ${answer.slice(0, 300)}`);
    return { cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: (performance.now() - t0) / 1e3 };
  });
  const slowest = Math.max(...times.map((t) => t.cpu_s));
  console.log(JSON.stringify({ run: r + 1, jobs: times, slowest_cpu_s: slowest, total_cpu_s: times.reduce((a, t) => a + t.cpu_s, 0) }));
}
