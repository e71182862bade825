// What the whole run costs (issue 28 §3, issue 29 §3): the Compare tab ranks configurations of
// different systems by time or by cost ("Rank by", URL key `rank`), at the user's price on the
// scenario's part and the example price on others; the sensitivity strip says each factor's cost
// and its change when a price is set; the cost card fits a phone. Screenshots in tests/artifacts/
// (run-cost-*.png), looked at by whoever changes these views.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ARTIFACTS, axeViolations, newPage, resultsSettled, screenshot, sharedBrowser, SMALL_SCENARIO } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Llama 3 8B on 64 H100 in extended mode (harness.mjs). */
const SCENARIO = SMALL_SCENARIO;

/** The compared columns as shown, left to right: letter, training days, cost, devices. */
async function columns(page) {
  return page.$$eval('table.compare thead th[data-pin]', (ths) => ths.map((th) => ({
    letter: th.dataset.letter,
    days: Number(th.dataset.days),
    cost: th.dataset.cost === '' ? null : Number(th.dataset.cost),
    devices: Number(th.dataset.devices),
  })));
}

test('Compare ranks systems by time or by cost; the choice is kept in the URL', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}${SCENARIO}&price=40`);
  await resultsSettled(page);
  // Pin the best H100 layout, then add the best on A100 80GB (example price 5.1207 per hour).
  await page.locator('table.results tbody tr').nth(0).locator('input.pin').check();
  await page.locator('#ex-tab-compare').click();
  await page.locator('table.compare thead th[data-pin]').first().waitFor();
  await page.locator('#ex-cmp-system').selectOption('nvidia_a100_sxm4_80gb');
  await page.locator('.add-system button', { hasText: 'Search and add' }).click();
  await page.locator('table.compare thead th[data-pin]').nth(1).waitFor({ timeout: 120_000 });
  // By time (the default): the H100 (A) first, faster.
  let cols = await columns(page);
  assert.deepEqual(cols.map((c) => c.letter), ['A', 'B']);
  assert.ok(cols[0].days < cols[1].days, JSON.stringify(cols));
  // Each column's money: devices × days × 24 h × its price (the user's 40 on the H100, the
  // example's 5.1207 on the A100).
  const hourly = { A: 40, B: 5.1207 };
  for (const c of cols) {
    const want = c.devices * c.days * 24 * hourly[c.letter];
    assert.ok(Math.abs(c.cost / want - 1) < 1e-9, `${c.letter}: ${c.cost} vs ${want}`);
  }
  assert.match(await page.locator('table.compare').innerText(), /USD \(example\)/);
  assert.match(await page.locator('table.compare').innerText(), /\(your price\)/);
  assert.match(await page.locator('table.compare tr.rank-row th').innerText(), /rank by time/);
  // By cost: the cheaper run first although it is slower.
  await page.locator('#ex-cmp-rank').selectOption('cost');
  await page.waitForURL(/[?&]rank=cost/);
  await page.waitForFunction(() => document.querySelector('table.compare thead th[data-pin]')?.dataset.letter === 'B');
  cols = await columns(page);
  assert.deepEqual(cols.map((c) => c.letter), ['B', 'A']);
  assert.ok(cols[0].cost < cols[1].cost && cols[0].days > cols[1].days, JSON.stringify(cols));
  assert.match(await page.locator('table.compare tr.rank-row th').innerText(), /rank by cost/);
  // Ratios stay against A, wherever it stands.
  const ratio = await page.$$eval('table.compare tr.ratio-row', (rows) => rows
    .filter((r) => r.querySelector('th').textContent === 'cost ÷ A')
    .map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent))[0]);
  assert.equal(ratio[1], '1.00×');
  await screenshot(page, 'run-cost-compare-1280');
  await page.locator('.panel-compare').screenshot({ path: path.join(ARTIFACTS, 'run-cost-compare-panel-1280.png') });
  await page.setViewportSize({ width: 390, height: 900 });
  await page.locator('.rank-by').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, 'run-cost-compare-390.png') });
  assert.deepEqual(await axeViolations(page), []);
  await page.setViewportSize({ width: 1280, height: 900 });
  // Reloaded: the same choice and order.
  await page.reload();
  await page.locator('table.compare thead th[data-pin]').nth(1).waitFor({ timeout: 120_000 });
  assert.equal(await page.locator('#ex-cmp-rank').inputValue(), 'cost');
  assert.deepEqual((await columns(page)).map((c) => c.letter), ['B', 'A']);
  // Back to time: the key is removed.
  await page.locator('#ex-cmp-rank').selectOption('time');
  await page.waitForFunction(() => !location.search.includes('rank='));
  assert.deepEqual((await columns(page)).map((c) => c.letter), ['A', 'B']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('with a price, the sensitivity strip says each factor\'s cost and its change in money', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}${SCENARIO}&price=2`);
  await resultsSettled(page);
  await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
  assert.match(await page.locator('.sens-cost-note').innerText(), /your 2 per device-hour/);
  assert.match(await page.locator('.sens-baseline').innerText(), /^As it is: [\d.,]+ days \([\d.,]+( M| bn)? at your price\) with 1d\./);
  const matrix = page.locator('.sens-row[data-feature="matrix"] .sens-cell');
  // ×2: fewer days and less money; ×0.5: more.
  assert.match(await matrix.nth(1).locator('.sens-cost-change').innerText(), /^−/);
  assert.match(await matrix.nth(0).locator('.sens-cost-change').innerText(), /^\+/);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.locator('section.sensitivity').scrollIntoViewIfNeeded();
    const over = await page.$eval('section.sensitivity', (s) => s.scrollWidth - s.clientWidth);
    assert.ok(over <= 1, `the strip overflows by ${over} px at ${width} px`);
    await page.locator('section.sensitivity').screenshot({ path: path.join(ARTIFACTS, `run-cost-sensitivity-${width}.png`) });
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the cost card fits at 1280 and 390 px, light and dark', async () => {
  for (const width of [1280, 390]) {
    for (const scheme of ['light', 'dark']) {
      const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
      await page.goto(`${server.base}${SCENARIO}`);
      await resultsSettled(page);
      const card = page.locator('section.run-cost');
      await card.locator('table.cost-table').waitFor({ timeout: 60_000 });
      await card.scrollIntoViewIfNeeded();
      // Nothing sticks out of the card, and each value is one short line beside its basis.
      const over = await card.evaluate((s) => [s.scrollWidth - s.clientWidth,
        ...[...s.querySelectorAll('*')].map((e) => e.getBoundingClientRect().right - s.getBoundingClientRect().right)]);
      assert.ok(Math.max(...over) <= 1, `${width} ${scheme}: overflow ${Math.max(...over)} px`);
      const values = await card.locator('.cost-value').allInnerTexts();
      assert.ok(values.length >= 3 && values.every((v) => v.length <= 16), JSON.stringify(values));
      assert.match(await card.innerText(), /example, not a quote/);
      await screenshot(page, `run-cost-card-page-${width}-${scheme}`);
      await card.screenshot({ path: path.join(ARTIFACTS, `run-cost-card-${width}-${scheme}.png`) });
      assert.deepEqual(await axeViolations(page), [], `${width} ${scheme}`);
      assert.deepEqual(page.errors, []);
      await page.close();
    }
  }
});
