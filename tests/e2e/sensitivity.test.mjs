// "What would help most" (issue 29 §3): below the explorer's results, the strip of the six
// system features at x0.5 and x2, each re-searched, sorted by the largest saving; a link per
// feature opens its full sweep in Studies with the axis set. axe-core finds no violation of any
// impact on the view, at 1280 and 390 px, light and dark; screenshots in tests/artifacts/
// (sensitivity-<width>-<scheme>.png).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ARTIFACTS, newPage, resultsSettled, screenshot, sharedBrowser, SMALL_SCENARIO } from './harness.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Llama 3 8B on 64 H100 in extended mode (harness.mjs). */
const SCENARIO = SMALL_SCENARIO;

/** Waits for the strip to finish; returns its rows as the page shows them. */
async function stripRows(page) {
  await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
  return page.$$eval('.sens-row', (rows) => rows.map((r) => ({
    feature: r.dataset.feature,
    label: r.querySelector('.sens-label').textContent,
    cells: [...r.querySelectorAll('.sens-cell')].map((c) => ({
      days: c.querySelector('.sens-days').textContent,
      change: c.querySelector('.sens-change').textContent,
      direction: c.dataset.direction,
    })),
  })));
}

/** The fewest days of a row [days] (Infinity without any). */
function bestDays(row) {
  return Math.min(...row.cells.map((c) => Number.parseFloat(c.days.replace(/,/g, ''))).filter(Number.isFinite), Infinity);
}

test('the strip shows six features sorted by effect, with units, and links to the sweep in Studies', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + SCENARIO);
  await resultsSettled(page);
  const rows = await stripRows(page);
  assert.equal(rows.length, 6);
  assert.deepEqual([...rows.map((r) => r.feature)].sort(),
    ['domain', 'hbm_bandwidth', 'hbm_capacity', 'matrix', 'scale_out', 'scale_up']);
  for (const r of rows) {
    assert.match(r.label, /\[(TFLOP\/s|GB\/s|GB|devices)\]$/, r.label);
    assert.equal(r.cells.length, 2);
    for (const c of r.cells) assert.match(c.days, /days$|does not fit|not possible/, c.days);
  }
  // Sorted: the fewest training days at either factor first.
  const best = rows.map(bestDays);
  for (let i = 1; i < best.length; i++) assert.ok(best[i - 1] <= best[i], `${best}`);
  // Twice the matrix rate is faster, with a signed percentage.
  const matrix = rows.find((r) => r.feature === 'matrix');
  assert.equal(matrix.cells[1].direction, 'faster');
  assert.match(matrix.cells[1].change, /^−\d+\.\d %$/);
  assert.match(await page.locator('.sens-baseline').textContent(), /^As it is: [\d.,]+ days with 1d\./);
  // The link of HBM capacity lands in Studies with that axis and the scenario set.
  await page.locator('.sens-row[data-feature="hbm_capacity"] a.sens-link').click();
  await page.waitForURL(/view=studies/);
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('ax.hbm_capacity'), 'x0.25,x0.5,x1,x2,x4');
  assert.equal(url.searchParams.get('s.model'), 'llama3-8b');
  assert.equal(url.searchParams.get('s.gpus'), '64');
  await page.locator('#sweep-axes .axis-row[data-axis="hbm_capacity"]').waitFor();
  assert.equal(await page.locator('#sweep-axes .axis-row[data-axis="hbm_capacity"] input.axis-values').inputValue(),
    'x0.25,x0.5,x1,x2,x4');
  await page.locator('#sweep-summary').waitFor({ timeout: 120_000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a new scenario replaces the strip and an edit is not held up by it', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + SCENARIO);
  await resultsSettled(page);
  await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
  // Another device count: the old strip goes, the new results come, then the new strip.
  await page.goto(server.base + SCENARIO.replace('gpus=64', 'gpus=128'));
  await resultsSettled(page);
  const rows = await stripRows(page);
  assert.equal(rows.length, 6);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the strip: no accessibility violation of any impact, 1280 and 390 px, light and dark', async () => {
  const found = [];
  for (const width of [1280, 390]) {
    for (const scheme of ['light', 'dark']) {
      const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
      await page.goto(server.base + SCENARIO);
      await resultsSettled(page);
      await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
      await page.locator('section.sensitivity').scrollIntoViewIfNeeded();
      await screenshot(page, `sensitivity-${width}-${scheme}`);
      await page.locator('section.sensitivity').screenshot({ path: path.join(ARTIFACTS, `sensitivity-strip-${width}-${scheme}.png`) });
      await page.addScriptTag({ path: AXE });
      const v = await page.evaluate(async () => {
        // eslint-disable-next-line no-undef
        const r = await axe.run(document, { resultTypes: ['violations'] });
        return r.violations.map((x) => `${x.impact} ${x.id}: ${x.help} — ${x.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      });
      for (const x of v) found.push(`${width}px ${scheme}: ${x}`);
      assert.deepEqual(page.errors, []);
      await page.close();
    }
  }
  assert.deepEqual(found, []);
});
