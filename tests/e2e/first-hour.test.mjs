// Issue 29, §6: the smaller defects a newcomer trips over in the first hour, each checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, resultsSettled, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const settled = resultsSettled;

test('ranks count 1, 2, 3… and a 2d-seqp row with CP 1 folds under its 1d twin', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await settled(page);
  const shown = await page.locator('table.results tbody tr:not([hidden])').evaluateAll((trs) =>
    trs.map((tr) => ({ rank: tr.querySelector('td').textContent.trim(), cells: [...tr.querySelectorAll('td.dim')].map((td) => td.textContent) })));
  assert.deepEqual(shown.map((r) => r.rank), shown.map((_, i) => String(i + 1)), 'no rank skipped');
  const layouts = shown.map((r) => r.cells.join(' '));
  assert.equal(new Set(layouts).size, layouts.length, `no layout listed twice: ${layouts.join(' | ')}`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the results table stays inside its card at 1280 px, and on a phone the results come first', async () => {
  const mixtral = '?mode=extended&model=mixtral-8x7b&gpus=128&batch=512';
  for (const [width, query] of [[1280, ''], [1280, mixtral], [390, ''], [390, mixtral]]) {
    const page = await newPage(browser, { viewport: { width, height: 844 } });
    await page.goto(server.base + query);
    await settled(page);
    // On a phone, measured once "What would help most" has loaded: it changes height and must
    // not push the results below the first screen.
    if (width === 390) await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
    const box = await page.evaluate(() => {
      const card = document.querySelector('.results-card').getBoundingClientRect();
      const wrap = document.querySelector('.results-wrap');
      return { card: card.right, wrap: wrap.getBoundingClientRect().right, top: card.top + window.scrollY, scroll: wrap.scrollWidth - wrap.clientWidth };
    });
    assert.ok(box.wrap <= box.card + 0.5, `${width}${query}: the table's box ends inside the card`);
    if (width === 1280) assert.ok(box.scroll <= 1, `${width}${query}: the table needs no sideways scroll (${box.scroll} px)`);
    if (width === 390) {
      assert.ok(box.top < 844, `${query || 'default'}: on a phone the results start on the first screen (at ${box.top} px)`);
      const order = await page.evaluate(() => {
        const top = (s) => document.querySelector(s).getBoundingClientRect().top;
        return { results: top('.results-card'), strip: top('section.sensitivity'), cost: top('.run-cost') };
      });
      assert.ok(order.results < order.cost && order.cost < order.strip, `${query || 'default'}: results, then the cost, then the strip (${JSON.stringify(order)})`);
      await page.locator('.to-scenario').click();
      await page.waitForFunction(() => Math.abs(document.querySelector('#scenario').getBoundingClientRect().top) < 40);
    }
    await page.close();
  }
});

test('a preset click brings its panel into view', async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 800 } });
  await page.goto(`${server.base}?view=studies`);
  await page.locator('#sweep-summary').waitFor({ timeout: 90_000 });
  const button = page.locator('button.preset-panel').nth(1);
  await button.click();
  await page.waitForFunction(() => {
    const r = document.querySelector('#study-panel').getBoundingClientRect();
    return r.top >= -1 && r.top < window.innerHeight / 3;
  });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'study-panel');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a sweep over systems is titled by its systems and its legend names them', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&mode=extended&s.model=llama3-8b&s.system=nvidia_h100_sxm5_80gb&s.global-batch=512`
    + '&ax.system=nvidia_h100_sxm5_80gb,nvidia_gb200_nvl72&ax.gpus=64,128&c.kind=line&c.x=gpus&c.series=system');
  await page.locator('#sweep-chart svg').first().waitFor({ timeout: 90_000 });
  const title = await page.locator('#sweep-chart svg title').first().textContent();
  assert.match(title, /2 systems/);
  assert.doesNotMatch(title, /nvidia_/);
  const legend = await page.locator('#sweep-chart svg').first().textContent();
  assert.doesNotMatch(legend, /nvidia_gb200_nvl72/, 'the legend names the systems, not their ids');
  assert.match(legend, /GB200/);
  await screenshot(page, 'studies-system-axis');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('memory says GB = 10⁹ bytes once, next to an "80 GB" part’s 85.5 GB', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await settled(page);
  assert.match(await page.locator('.results-card .summary').textContent(), /85\.5 GB \(sold as “80 GB”, which counts GiB; GB here are 10⁹ bytes\)/);
  // One memory figure, one precision, with its unit: the first row's cell, the headline (which
  // says "GB" where no column header does), the breakdown's total and the chart's bar #1.
  const row = (await page.locator('table.results tbody tr .mem-num').first().textContent()).trim();
  const figure = row.match(/^(\d+\.\d) ± \d+\.\d$/)?.[1];
  assert.ok(figure, `the row's cell: ${row}`);
  const head = (await page.locator('.selected .headline .mem-num').textContent()).replace(/\s+/g, ' ').trim();
  assert.match(head, new RegExp(`^${figure.replace('.', '\\.')} ± \\d+\\.\\d GB$`), `the headline has the figure and its unit: ${head}`);
  const total = await page.locator('table', { hasText: 'Memory per device' }).filter({ has: page.locator('th', { hasText: 'activations' }) })
    .locator('tr', { hasText: 'total' }).locator('td').first().textContent();
  assert.equal(total.trim(), figure, 'the breakdown table says the same figure');
  await page.locator('.panel-breakdown text.fc-limit-label').waitFor({ timeout: 60_000 });
  const bar = await page.locator('.panel-breakdown svg.fc').filter({ has: page.locator('title', { hasText: 'Memory per device' }) })
    .evaluate((svg) => svg.querySelector('.fc-totals text').firstChild.textContent.trim());
  assert.equal(bar, figure, 'the chart\'s bar total says the same figure, to the same decimal ("69.0", not "69")');
  await page.close();
});

test('implausible budgets are refused at the field; "2k" devices say they are 2,000', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await settled(page);
  for (const [typed, rule] of [['1.5', /less than one step/], ['1e300', /more than 10\^17/]]) {
    await page.locator('#ex-budget').fill(typed);
    const error = page.locator('#ex-budget-error');
    await error.filter({ hasText: rule }).waitFor({ timeout: 10_000 });
    assert.ok((await error.textContent()).length < 200, 'no 300-digit number');
  }
  await page.locator('#ex-budget').fill('');
  await page.locator('#ex-gpus').fill('2k');
  await page.getByText('“2k” = 2,000 devices (k = 1,000, not 1,024)').waitFor();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('gpus') === '2k');
  await page.waitForFunction(() => /2,000 devices/.test(document.querySelector('.results-card .summary')?.textContent), null, { timeout: 60_000 });
  await settled(page);
  assert.match(await page.locator('.results-card .summary').textContent(), /2,000 devices/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a reference-mode permalink names the part family its error bar has no runs on', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?gpus=4096`);
  await settled(page);
  const line = await page.locator('#ex-error-bar').textContent();
  assert.doesNotMatch(line, / on {2}parts/);
  assert.match(line, /NVIDIA Hopper/);
  assert.equal(await page.locator('#reference-models').count(), 0, 'the reference models live on the About view');
  await page.close();
});

test('the skip link leads to the view; a chart reached by keyboard shows a focus ring', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await settled(page);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'skip-link');
  await page.keyboard.press('Enter');
  // The focus moves on the next animation frame (pages::reveal); wait for it, at most 5 s.
  await page
    .waitForFunction(() => document.activeElement?.id === 'main-content', null, { timeout: 5000 })
    .catch(() => {});
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main-content');
  const chart = page.locator('svg.fc').first();
  await chart.focus();
  await page.keyboard.press('ArrowRight');
  const outline = await chart.evaluate((el) => getComputedStyle(el).outlineStyle);
  assert.equal(outline, 'solid');
  assert.deepEqual(page.errors, []);
  await page.close();
});
