// Mixture-of-Experts as a first-class scenario in the Explorer (issue 29 §4): the expert
// all-to-all is a time part of its own ("EP all-to-all": a bar in the charts, a row in the
// breakdown; TP comm 0 at TP 1), the MoE switches (dispatcher, load, overlap, FP8 dispatch) are
// controls that round-trip a reload and hide for dense models and in reference mode, and an empty
// batch is the model's own (DeepSeek-V3: 15,360) wherever the hint says so. Screenshots of
// DeepSeek-V3 and Mixtral at 1280 and 390 px, light and dark, with axe-core: no violation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, newPage, resultsSettled, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const MIXTRAL = '?view=explorer&mode=extended&model=mixtral-8x7b&system=nvidia_h100_sxm5_80gb&domain=8&gpus=128&batch=512&strategies=1d&top=10';
const DEEPSEEK = '?view=explorer&mode=extended&model=deepseek-v3&system=nvidia_h800_sxm5_80gb&domain=8&gpus=256&batch=&strategies=1d&top=5';

/** The breakdown's "Time per step" table: component label → seconds. */
async function timeParts(page) {
  const rows = await page.locator('.parts table').first().locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [tr.querySelector('th').textContent.trim(), tr.querySelector('td').textContent.trim()]));
  return Object.fromEntries(rows.map(([k, v]) => [k, Number(v.replace(/[^\d.eE+-]/g, ''))]));
}

/** The legend of the "Time per step by component" chart. */
async function timeLegend(page) {
  return page.locator('.chart-box').first().locator('svg').first().textContent();
}

test('an MoE scenario shows an EP all-to-all bar, and TP comm 0 at TP 1', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + MIXTRAL);
  await resultsSettled(page, 180_000);
  // A row at TP 1, viewed in the breakdown.
  const row = page.locator('table.results tbody tr:not([hidden])[data-config*=".tp1."]').first();
  assert.ok(await row.count(), 'a configuration at TP 1 in the list');
  await row.locator('button', { hasText: 'View' }).click();
  await page.waitForTimeout(200);
  const parts = await timeParts(page);
  assert.equal(parts['TP comm'], 0, `TP comm at TP 1: ${JSON.stringify(parts)}`);
  assert.ok(parts['EP all-to-all'] > 0, `EP all-to-all: ${JSON.stringify(parts)}`);
  assert.match(await timeLegend(page), /EP all-to-all/);
  await page.locator('.moe-note').waitFor();
  assert.match(await page.locator('.moe-note').textContent(), /EP all-to-all is [\d.,]+ s of exposed dispatch/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a dense scenario has no EP all-to-all part and no MoE controls', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + '?view=explorer');
  await resultsSettled(page);
  assert.doesNotMatch(await timeLegend(page), /EP all-to-all/);
  assert.equal((await timeParts(page))['EP all-to-all'], undefined);
  assert.equal(await page.locator('#ex-moe-dispatcher').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the MoE controls write the URL, round-trip a reload, and hide in reference mode', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + MIXTRAL);
  await resultsSettled(page, 180_000);
  await page.locator('#ex-moe-dispatcher').selectOption('deepep:4');
  await page.locator('#ex-moe-a2a_overlap').selectOption('on');
  await page.locator('#ex-moe-fp8_dispatch').check();
  await page.locator('#ex-moe-load').fill('dropless:1.3');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('moe.load') === 'dropless:1.3');
  await resultsSettled(page, 180_000);
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('moe.dispatcher'), 'deepep:4');
  assert.equal(url.searchParams.get('moe.a2a_overlap'), 'on');
  assert.equal(url.searchParams.get('moe.fp8_dispatch'), 'on');
  for (const key of ['model', 'system', 'gpus', 'batch', 'mode']) assert.ok(url.searchParams.has(key), key);
  const summary = await page.locator('.results-card .summary').textContent();
  await page.reload();
  await resultsSettled(page, 180_000);
  assert.equal(await page.locator('#ex-moe-dispatcher').inputValue(), 'deepep:4');
  assert.equal(await page.locator('#ex-moe-a2a_overlap').inputValue(), 'on');
  assert.ok(await page.locator('#ex-moe-fp8_dispatch').isChecked());
  assert.equal(await page.locator('#ex-moe-load').inputValue(), 'dropless:1.3');
  assert.equal((await page.locator('.results-card .summary').textContent()).replace(/ in [\d,]+ ms/, ''),
    summary.replace(/ in [\d,]+ ms/, ''), 'the same results after the reload');
  // A load the model cannot read is refused at its field.
  await page.locator('#ex-moe-load').fill('sometimes');
  await page.waitForFunction(() => document.querySelector('#ex-moe-load-error')?.textContent.trim());
  assert.match(await page.locator('#ex-moe-load-error').textContent(), /dropless|forced|capacity/);
  await page.locator('#ex-moe-load').fill('forced');
  await page.waitForFunction(() => !document.querySelector('#ex-moe-load-error')?.textContent.trim());
  // Back to the default dispatcher: the key leaves the URL.
  await page.locator('#ex-moe-dispatcher').selectOption('');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('moe.dispatcher'));
  // Reference mode has no experts: no MoE controls.
  await page.locator('#mode-panel .mode-button[data-mode="reference"]').click();
  await page.waitForFunction(() => !document.querySelector('#ex-moe-dispatcher'));
  // Their keys wait in the URL, neither dropped nor an error, and come back with extended mode.
  assert.equal(new URL(page.url()).searchParams.get('moe.load'), 'forced');
  assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('.field-error')]
    .map((e) => e.textContent.trim()).filter((t) => t)), [], 'no field in error');
  await page.locator('#mode-panel .mode-button[data-mode="extended"]').click();
  await page.locator('#ex-moe-load').waitFor();
  assert.equal(await page.locator('#ex-moe-load').inputValue(), 'forced');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('an empty batch is the model\'s own where the hint says so, and required where there is none', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + DEEPSEEK);
  await page.locator('#ex-batch').waitFor();
  assert.match(await page.locator('#ex-batch').getAttribute('placeholder'), /15360 \(the model's own\)/);
  const help = await page.locator('#ex-batch').evaluate((el) => el.closest('.field').querySelector('.field-help').textContent);
  assert.match(help, /empty: the model's own, 15,360 \(DeepSeek-AI 2024/);
  await resultsSettled(page, 240_000);
  assert.equal((await page.locator('#ex-batch-error').textContent()).trim(), '');
  assert.match(await page.locator('.results-card .summary').textContent(), /15,360/);
  // Mixtral's papers give no batch: the hint asks for one, and promises nothing.
  await page.locator('#ex-model').selectOption('mixtral-8x7b');
  await page.locator('#ex-batch').fill('');
  await page.waitForTimeout(400);
  const mixtralHelp = await page.locator('#ex-batch').evaluate((el) => el.closest('.field').querySelector('.field-help').textContent);
  assert.match(mixtralHelp, /required/);
  assert.doesNotMatch(mixtralHelp, /model's own/);
  assert.equal(await page.locator('#ex-batch').getAttribute('placeholder'), 'required');
  assert.deepEqual(page.errors, []);
  await page.close();
});

for (const [name, query] of [['deepseek-v3', DEEPSEEK], ['mixtral', MIXTRAL]]) {
  test(`${name} in the explorer: screenshots at 1280 and 390 px, light and dark, no axe violation`, async () => {
    const found = [];
    for (const width of [1280, 390]) {
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
        await page.goto(server.base + query);
        await resultsSettled(page, 240_000);
        await screenshot(page, `moe-explorer-${name}-${width}-${scheme}`);
        found.push(...(await axeViolations(page)).map((v) => `${width} ${scheme}: ${v}`));
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${name} at ${width} px is ${overflow} px too wide`);
        assert.deepEqual(page.errors, []);
        await page.close();
      }
    }
    assert.deepEqual(found, []);
  });
}
