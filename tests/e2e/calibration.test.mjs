// "Your measured run" (issue 28): paste torchtitan log lines into the Explorer, see the selected
// configuration's uncalibrated and calibrated numbers side by side (and both bests), reload and see
// them again with the entries kept, export the calibration, and the CLI reproduces the calibrated
// numbers with `fmperf search --calibration FILE`. The cost card shows the whole run's
// device-hours, energy and money at the example price, then at the user's. Screenshots at 1280 and
// 390 px, light and dark; axe-core finds no violation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newPage, resultsSettled, screenshot, ROOT, sharedBrowser } from './harness.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

// The torchtitan run of the log: Llama 3 8B on 8 H100, one 8,192-token sample per device and step.
const SCENARIO = 'view=explorer&mode=extended&model=llama3-8b&system=nvidia_h100_sxm5_80gb&gpus=8&batch=8';

/** `fmperf ARGS --format json` (the binary in FMPERF_BIN, else cargo run). */
function fmperf(...args) {
  const options = { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24, timeout: 600_000 };
  const all = [...args, '--format', 'json'];
  const out = process.env.FMPERF_BIN
    ? execFileSync(process.env.FMPERF_BIN, all, options)
    : execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', ...all], options);
  return JSON.parse(out);
}

/** The steady-state step lines of the README's torchtitan example log. */
const LOG = readFileSync(path.join(ROOT, 'examples/logs/torchtitan-llama3-8b.log'), 'utf8')
  .split('\n').filter((l) => l.includes('step:')).join('\n');

/** What the panel shows: the compared configuration, both times, both bests, the table's cells. */
async function shown(page) {
  const table = page.locator('table.cal-compare');
  await table.waitFor({ timeout: 60_000 });
  await page.locator('.cal-best[data-time-calibrated]').waitFor({ timeout: 60_000 });
  const best = page.locator('.cal-best');
  return {
    config: await table.getAttribute('data-config'),
    uncalibrated: Number(await table.getAttribute('data-time-uncalibrated')),
    calibrated: Number(await table.getAttribute('data-time-calibrated')),
    bestConfig: await best.getAttribute('data-config'),
    best: Number(await best.getAttribute('data-time-calibrated')),
    header: await table.locator('thead').innerText(),
    cells: await table.locator('tbody td').allInnerTexts(),
    changed: await page.locator('.cal-changed').innerText(),
  };
}

async function violations(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
}

test('a pasted log calibrates the scenario, survives a reload, exports, and the CLI reproduces it', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?${SCENARIO}&tab=measured`);
  await resultsSettled(page);
  await page.locator('#cal-log').fill(LOG);
  await page.locator('#cal-fit').click();
  const first = await shown(page);
  assert.match(first.header, /Uncalibrated \(shipped fit\)/);
  assert.match(first.header, /Calibrated on your run/);
  assert.equal(first.cells.length, 12, first.cells.join(' | '));
  assert.match(first.changed, /^Changed: compute_scale 1 → 0\.\d+ \(-\d+\.\d %\); memory_overhead_gb 0 → [+-]\d+\.\d+ GB\.$/);
  // The log's 5,895 tokens/s per device is slower than predicted: the calibrated step is longer.
  assert.ok(first.calibrated > first.uncalibrated, JSON.stringify(first));
  // The error band narrows where the calibration covers the prediction (its own run's scenario).
  assert.match(await page.locator('.cal-coverage').innerText(), /Error band narrowed/);
  await screenshot(page, 'calibration-1280-light');

  // Reload: the entries and the calibration are still there, and so are both numbers.
  await page.reload();
  await resultsSettled(page);
  assert.equal(await page.locator('#cal-log').inputValue(), LOG);
  const again = await shown(page);
  assert.deepEqual(again, first);

  // Export, and the CLI prices the same numbers with the file.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#cal-export').click()]);
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'fmperf-cal-')), 'my-stack.json');
  await download.saveAs(file);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(doc.version, 1);
  assert.equal(doc.system, 'nvidia_h100_sxm5_80gb');
  assert.equal(doc.from.layout, first.config);
  const cli = fmperf('search', '--model', 'llama3-8b', '--system', 'nvidia_h100_sxm5_80gb', '--gpus', '8',
    '--global-batch', '8', '--top', '100', '--calibration', file);
  assert.equal(cli.calibrated.results[0].time_per_iteration_s, first.best);
  assert.equal(cli.calibrated.results[0].code, first.bestConfig);
  const mine = cli.calibrated.results.find((r) => r.code === first.config);
  if (mine) assert.equal(mine.time_per_iteration_s, first.calibrated);
  const plain = cli.uncalibrated.results.find((r) => r.code === first.config);
  assert.equal(plain.time_per_iteration_s, first.uncalibrated);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the cost card: the example price labelled, then the user\'s; screenshots and axe at 1280 and 390 px, light and dark', async () => {
  const found = [];
  for (const width of [1280, 390]) {
    for (const scheme of ['light', 'dark']) {
      const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
      await page.goto(`${server.base}?${SCENARIO}&tab=measured`);
      await resultsSettled(page);
      // The panel with a calibration, as a user sees it after pasting a log.
      await page.locator('#cal-log').fill(LOG);
      await page.locator('#cal-fit').click();
      await shown(page);
      const card = page.locator('section.run-cost');
      await card.locator('table.cost-table').waitFor({ timeout: 60_000 });
      const text = await card.innerText();
      assert.match(text, /Device-hours/);
      assert.match(text, /example, not a quote/);
      if (width === 1280 && scheme === 'light') {
        const hours = Number(await card.locator('table.cost-table').getAttribute('data-gpu-hours'));
        const total = Number(await card.locator('table.cost-table').getAttribute('data-total'));
        assert.ok(Math.abs(total / (hours * 12.29) - 1) < 1e-12, `${total} ${hours}`);
        await page.locator('#ex-price').fill('2');
        await page.waitForFunction(() => document.querySelector('table.cost-table')?.getAttribute('data-total')
          && !document.querySelector('section.run-cost').innerText.includes('example, not a quote'));
        const mine = Number(await card.locator('table.cost-table').getAttribute('data-total'));
        assert.ok(Math.abs(mine / (hours * 2) - 1) < 1e-12, `${mine}`);
        assert.match(page.url(), /price=2/);
      }
      found.push(...(await violations(page)).map((v) => `${width} ${scheme}: ${v}`));
      await screenshot(page, `calibration-${width}-${scheme}`);
      assert.deepEqual(page.errors, []);
      await page.close();
    }
  }
  assert.deepEqual(found, []);
});
