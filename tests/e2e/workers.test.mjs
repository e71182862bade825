// Searches and sweeps on the page's Web Workers: the same results as the time slices on the main
// thread (forced with the debug switch localStorage["fmperf.workers"] = "off"), progress and
// cancel, and the silent fallback to time slices where workers cannot run (a CSP that forbids
// them; the single file on file:// is covered by offline.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DIST, newPage, screenshot, sharedBrowser, staticServer } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** A page that counts the jobs handed to workers (`__jobs`), the workers ready (`__ready`) and
 * terminated (`__terminated`); `off`: the debug switch forces the time slices. */
async function instrumented(options = {}, off = false) {
  const page = await newPage(browser, options);
  await page.addInitScript((off) => {
    if (off) localStorage.setItem('fmperf.workers', 'off');
    Object.assign(window, { __jobs: 0, __ready: 0, __terminated: 0 });
    const Base = window.Worker;
    window.Worker = class extends Base {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', (e) => {
          if (e.data && e.data.ready) window.__ready++;
        });
      }
      postMessage(msg, ...rest) {
        if (msg && msg.job) window.__jobs++;
        return super.postMessage(msg, ...rest);
      }
      terminate() {
        window.__terminated++;
        return super.terminate();
      }
    };
  }, off);
  return page;
}

const jobs = (page) => page.evaluate(() => window.__jobs);

/** The text of a download triggered by clicking `selector`. */
async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await download.path(), 'utf8');
}

/** The finished sweep on screen: exports, summary (without the time) and the paper comparison. */
async function sweepOutput(page) {
  await page.locator('#sweep-summary').waitFor({ timeout: 60_000 });
  return {
    csv: await downloadText(page, '#sweep-csv'),
    json: await downloadText(page, '#sweep-json'),
    summary: (await page.locator('#sweep-summary').textContent()).replace(/ in [\d.]+ s$/, ''),
    compare: await page.locator('#compare-summary').textContent(),
  };
}

test('the strong-scaling sweep on workers equals the time-sliced sweep, byte for byte', async () => {
  const url = `${server.base}?view=studies&preset=strong-scaling&panel=gpt3_1T`;
  const out = {};
  for (const off of [false, true]) {
    const page = await instrumented({}, off);
    await page.goto(url);
    out[off ? 'slices' : 'workers'] = await sweepOutput(page);
    out[off ? 'slicesJobs' : 'workerJobs'] = await jobs(page);
    assert.deepEqual(page.errors, []);
    await page.close();
  }
  assert.ok(out.workerJobs >= 2, `the sweep ran as jobs on workers (${out.workerJobs})`);
  assert.equal(out.slicesJobs, 0, 'the debug switch keeps the work on the page');
  assert.match(out.workers.summary, /^117 points \(69 with a configuration that fits\)/);
  assert.match(out.workers.compare, /^56 of 56 published values/);
  for (const k of ['csv', 'json', 'summary', 'compare']) assert.equal(out.workers[k], out.slices[k], k);
});

test('an explorer search on workers equals the time-sliced search', async () => {
  const scenario = 'view=explorer&mode=reference&model=gpt3_1T&system=H200&domain=8&batch=4096';
  // With workers: the page's first search runs in time slices while the workers start; the next
  // one (another device count) runs on them.
  const page = await instrumented();
  await page.goto(`${server.base}?${scenario}&gpus=4096`);
  await page.locator('.summary', { hasText: '4,096 devices' }).waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => window.__ready >= 1, null, { timeout: 30_000 });
  await page.locator('input#ex-gpus').fill('2048');
  await page.locator('.summary', { hasText: '2,048 devices' }).waitFor({ timeout: 60_000 });
  assert.ok((await jobs(page)) >= 1, 'the second search ran on workers');
  const table = await page.locator('table.results').textContent();
  const summary = (await page.locator('.summary').textContent()).replace(/in \d+ ms/, '');
  const json = await downloadText(page, 'button:has-text("JSON")');
  await screenshot(page, 'workers-explorer-after-1280-light');
  assert.deepEqual(page.errors, []);
  await page.close();
  // The same scenario in time slices.
  const sliced = await instrumented({}, true);
  await sliced.goto(`${server.base}?${scenario}&gpus=2048`);
  await sliced.locator('.summary', { hasText: '2,048 devices' }).waitFor({ timeout: 60_000 });
  assert.equal(await jobs(sliced), 0);
  assert.equal(await sliced.locator('table.results').textContent(), table);
  assert.equal((await sliced.locator('.summary').textContent()).replace(/in \d+ ms/, ''), summary);
  assert.equal(await downloadText(sliced, 'button:has-text("JSON")'), json);
  assert.deepEqual(sliced.errors, []);
  await sliced.close();
});

test('a search on workers shows its progress and can be cancelled (the workers are terminated)', async () => {
  // A narrow phone in dark mode: the page's default scenario first (time slices while the workers
  // start), then DeepSeek-V3 (a long Mixture-of-Experts search) on the workers.
  const page = await instrumented({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
  await page.goto(`${server.base}?view=explorer`);
  await page.locator('table.results tbody tr').first().waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => window.__ready >= 1, null, { timeout: 30_000 });
  await page.selectOption('select#ex-model', 'deepseek-v3');
  await page.locator('input#ex-batch').fill('8192');
  await page.locator('.run-status .progress').waitFor({ timeout: 30_000 });
  assert.ok((await jobs(page)) >= 1);
  await page.waitForTimeout(500);
  await screenshot(page, 'workers-explorer-during-390-dark');
  await page.locator('.run-status button.cancel').click();
  await page.locator('.run-status', { hasText: 'Search cancelled' }).waitFor();
  assert.ok((await page.evaluate(() => window.__terminated)) >= 1, 'cancel terminated the busy workers');
  // The pool starts new workers for the next search, which finishes.
  const before = await jobs(page);
  await page.selectOption('select#ex-model', 'llama3-8b');
  await page.locator('input#ex-batch').fill('');
  await page.locator('.summary', { hasText: 'llama3-8b on' }).waitFor({ timeout: 60_000 });
  assert.ok((await jobs(page)) > before, 'the next search ran on new workers');
  await screenshot(page, 'workers-explorer-after-390-dark');
  assert.deepEqual(page.errors, []);
  await page.close();

  // A sweep: cancel while it runs on workers.
  const studies = await instrumented();
  await studies.goto(`${server.base}?view=studies&s.model=gpt3_1T&s.system=B200&ax.nvlink=4..256&ax.gpus=4..16384&ax.hbm_capacity=x0.5,x1,x2`);
  await studies.locator('#sweep-cancel').waitFor({ timeout: 30_000 });
  await studies.waitForFunction(() => window.__jobs >= 1, null, { timeout: 30_000 });
  await studies.click('#sweep-cancel');
  await studies.locator('#sweep-run').waitFor();
  assert.ok((await studies.evaluate(() => window.__terminated)) >= 1);
  assert.deepEqual(studies.errors, []);
  await studies.close();
});

test('where a CSP forbids workers, the same sweep runs in time slices, silently', async () => {
  const csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; worker-src 'none'";
  const srv = await staticServer(DIST, { csp });
  try {
    const page = await instrumented();
    await page.goto(`${srv.base}?view=studies&preset=strong-scaling&panel=gpt3_1T`);
    const out = await sweepOutput(page);
    assert.match(out.summary, /^117 points \(69 with a configuration that fits\)/);
    assert.match(out.compare, /^56 of 56 published values/);
    // The browser reports the refused worker on its console; the page itself says nothing.
    const own = page.errors.filter((e) => !/Content Security Policy/i.test(e));
    assert.deepEqual(own, []);
    assert.equal(await page.locator('text=/worker/i').count(), 0, 'nothing on the page mentions workers');
    await page.close();
  } finally {
    srv.stop();
  }
});

test('an edit while the strip re-searches on the workers: the new search is not stranded behind it', async () => {
  // The strip's re-searches fill every worker; the edit's search queues behind them and the strip is
  // then cancelled (its workers terminated). The queued search must start on restarted workers
  // (the pool used to wait for a message from a worker that no longer existed). The default
  // scenario (Llama 3 70B on 1,024 H100) keeps the strip busy for seconds.
  const page = await instrumented();
  await page.goto(`${server.base}?view=explorer`);
  await page.locator('section.sensitivity[data-state="running"]').waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => window.__jobs >= 1, null, { timeout: 30_000 });
  const terminated = await page.evaluate(() => window.__terminated);
  const running = (await page.locator('section.sensitivity').getAttribute('data-state')) === 'running';
  console.log(`# the strip was ${running ? '' : 'no longer '}running at the edit`);
  await page.locator('input#ex-gpus').fill('512');
  await page.locator('.summary', { hasText: '512 devices' }).waitFor({ timeout: 30_000 });
  if (running) {
    assert.ok((await page.evaluate(() => window.__terminated)) > terminated, 'the strip was cancelled on its workers');
  }
  // The strip follows the new scenario.
  await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});
