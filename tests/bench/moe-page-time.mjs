// The page's Mixture-of-Experts search time (issue 29 §4): DeepSeek-V3 on 1,024 H100 SXM5 with a
// global batch of 15,360, every strategy, top 10 (66,476 candidates), in headless Chromium. Prints
// the time the page states under its results ("in N ms") for the first search (time slices on
// the main thread while the workers start) and for a second one on the warm worker pool, and
// the wall time from the navigation to the results.
// Usage: node tests/bench/moe-page-time.mjs [BASE_URL]   (default: serves dist/ itself)
import { launch, newPage, serve } from '../e2e/harness.mjs';

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
const t0 = Date.now();
await page.goto(base + QUERY);
await settled();
const first = { wall_ms: Date.now() - t0, stated_ms: await stated() };
// A second search of the same size on the warm pool: the top list one longer, typed.
await page.waitForTimeout(1500);
const t1 = Date.now();
await page.locator('#ex-top').fill('11');
await settled();
const second = { wall_ms: Date.now() - t1, stated_ms: await stated() };
console.log(JSON.stringify({ first, second, errors: page.errors }));
await browser.close();
server?.stop();
