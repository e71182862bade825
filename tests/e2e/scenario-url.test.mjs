// Issue 29, §1: the URL keeps the scenario. Every control of the explorer, clicked on a page, writes
// a URL that reloads into the same scenario (model, system, domain, devices, batch and mode, as the
// results' summary line states them); a system's own scale-up domain when the URL has none; a comma
// in a switch value refused at its field, the error gone once corrected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, resultsSettled, screenshot, sharedBrowser, SMALL_SCENARIO } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const settled = resultsSettled;

/** The scenario the page shows: the results' summary line (model, system, domain, devices,
 *  batch; its timing left out) and the mode of the results' badge. */
async function scenario(page) {
  await settled(page);
  return page.evaluate(() => ({
    summary: document.querySelector('.results-card .summary').textContent.replace(/ in \d+ ms/, '').trim(),
    mode: document.querySelector('#results-mode')?.dataset.mode,
  }));
}

/** Every control a newcomer clicks that is not part of the scenario, with how to click it. */
const CONTROLS = [
  ['a results tab', (p) => p.locator('[role="tablist"] [data-list="1d"]').click()],
  ['another strategy tab', (p) => p.locator('[role="tablist"] [data-list="2d-seqp"]').click()],
  ['the all-strategies tab', (p) => p.locator('[role="tablist"] [data-list="all"]').click()],
  ['an arrow key in the tab bar', async (p) => {
    await p.locator('[role="tablist"] [data-list="all"]').focus();
    await p.keyboard.press('ArrowRight');
  }],
  ['the mainstream box', (p) => p.locator('#ex-mainstream').check()],
  ['the mainstream box again', (p) => p.locator('#ex-mainstream').uncheck()],
  ['a row’s View button', (p) => p.locator('table.results tbody tr:not([hidden])').nth(1).locator('button', { hasText: 'View' }).click()],
  ['a row’s compare box', (p) => p.locator('table.results tbody tr:not([hidden]) input.pin').first().check()],
  ['the Layers tab', (p) => p.locator('#ex-tab-layers').click()],
  ['the Compare tab', (p) => p.locator('#ex-tab-compare').click()],
  ['the Try-your-own tab', (p) => p.locator('#ex-tab-own').click()],
  ['the Your-run tab', (p) => p.locator('#ex-tab-run').click()],
  ['an arrow key in the detail tabs', async (p) => {
    await p.locator('#ex-tab-run').focus();
    await p.keyboard.press('ArrowLeft');
  }],
  ['the Breakdown tab', (p) => p.locator('#ex-tab-breakdown').click()],
];

for (const [name, start] of [['the default page', ''], ['a fresh explorer link', '?view=explorer'], ['reference mode', '?mode=reference']]) {
  test(`every control on ${name} keeps the scenario, clicked and reloaded`, async () => {
    const page = await newPage(browser);
    await page.goto(server.base + start);
    const first = await scenario(page);
    for (const [what, click] of CONTROLS) {
      await click(page);
      await page.waitForTimeout(100);
      assert.deepEqual(await scenario(page), first, `${what}: the scenario on the page`);
      const url = page.url();
      for (const key of ['model', 'system', 'domain', 'gpus', 'batch', 'mode']) {
        assert.ok(new URL(url).searchParams.has(key), `${what} writes ${key}: ${url}`);
      }
      await page.reload();
      assert.deepEqual(await scenario(page), first, `${what}, reloaded (${url})`);
    }
    // The mode toggle changes the mode and keeps the rest.
    const other = first.mode === 'extended' ? 'reference' : 'extended';
    await page.locator(`#mode-panel .mode-button[data-mode="${other}"]`).click();
    const switched = await scenario(page);
    assert.equal(switched.mode, other);
    assert.equal(switched.summary.split(' — ')[0], first.summary.split(' — ')[0], 'the mode keeps the scenario');
    await page.reload();
    assert.deepEqual(await scenario(page), switched, 'the mode, reloaded');
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test('every scenario control writes what it shows, and a reload shows it again', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await scenario(page);
  const edits = [
    ['the model', (p) => p.locator('#ex-model').selectOption('llama3-8b')],
    ['the system', (p) => p.locator('#ex-system').selectOption('nvidia_gb200_nvl72')],
    ['the devices', (p) => p.locator('#ex-gpus').fill('512')],
    ['the batch', (p) => p.locator('#ex-batch').fill('1024')],
    ['the domain', (p) => p.locator('#ex-domain').fill('36')],
    ['the domain emptied', (p) => p.locator('#ex-domain').fill('')],
    ['a strategy box', (p) => p.locator('fieldset.strategies input').nth(1).uncheck()],
    ['the top-k', (p) => p.locator('#ex-top').fill('5')],
  ];
  for (const [what, edit] of edits) {
    await edit(page);
    // Text fields write the URL after a pause in typing.
    await page.waitForTimeout(900);
    const shown = await scenario(page);
    await page.reload();
    assert.deepEqual(await scenario(page), shown, `${what}, reloaded (${page.url()})`);
  }
  assert.match((await scenario(page)).summary, /scale-up domain 72 · 512 devices · global batch 1,024/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Issue 29 §1, the rest of the controls: the budget and its unit, the price (on the "Your measured
// run" tab), Compare's system and domain pickers, a saved scenario's link and the strip's Studies
// link. Each keeps the scenario, writes what it shows, and a reload shows it again.
test('the budget, its unit, the price, Compare, the measured-run tab, a saved link and the Studies link survive a reload', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + SMALL_SCENARIO);
  const first = await scenario(page);
  const q = () => new URL(page.url()).searchParams;
  /** What the page shows beyond the summary line: the budget, its unit, the price, the tab. */
  const shown = async () => ({
    ...(await scenario(page)),
    budget: await page.locator('#ex-budget').inputValue(),
    unit: await page.locator('#ex-unit').inputValue(),
    tab: await page.locator('[role="tab"][aria-selected="true"][id^="ex-tab-"]').getAttribute('id'),
    price: (await page.locator('#ex-price').count()) ? await page.locator('#ex-price').inputValue() : null,
  });
  const reloadSame = async (what) => {
    const before = await shown(page);
    const url = page.url();
    await page.reload();
    assert.deepEqual(await shown(page), before, `${what}, reloaded (${url})`);
    return before;
  };

  // The budget and its unit.
  await page.locator('#ex-budget').fill('2e11');
  await page.waitForTimeout(900);
  await page.locator('#ex-unit').selectOption('samples');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('unit') === 'samples');
  assert.equal(q().get('budget'), '2e11');
  const budgeted = await reloadSame('the budget and its unit');
  assert.equal(budgeted.summary, first.summary, 'the budget keeps the scenario');
  assert.deepEqual([budgeted.budget, budgeted.unit], ['2e11', 'samples']);

  // "Your measured run", and the price on it.
  await page.locator('#ex-tab-measured').click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('tab') === 'measured');
  await page.locator('#ex-price').fill('2.5');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('price') === '2.5');
  for (const key of ['model', 'system', 'domain', 'gpus', 'batch', 'mode', 'budget', 'unit']) {
    assert.ok(q().has(key), `the measured tab and the price write ${key}: ${page.url()}`);
  }
  const priced = await reloadSame('the measured-run tab and the price');
  assert.equal(priced.summary, first.summary);
  assert.deepEqual([priced.tab, priced.price], ['ex-tab-measured', '2.5']);

  // Compare's pickers: the best on another system and domain is pinned in the URL and survives a reload.
  await page.locator('#ex-tab-compare').click();
  await page.locator('#ex-cmp-system').selectOption('nvidia_a100_sxm4_80gb');
  await page.locator('#ex-cmp-domain').fill('4');
  await page.locator('.add-system button', { hasText: 'Search and add' }).click();
  await page.waitForFunction(() => (new URL(location.href).searchParams.get('cmp') ?? '').includes('nvidia_a100_sxm4_80gb'), null, { timeout: 120_000 });
  const cmp = q().get('cmp');
  assert.match(cmp, /nvidia_a100_sxm4_80gb/);
  const compared = await reloadSame('a column added on another system');
  assert.equal(compared.summary, first.summary, 'adding a column keeps the scenario');
  assert.equal(q().get('cmp'), cmp);
  await page.locator('table.compare').waitFor({ timeout: 60_000 });
  assert.match(await page.locator('table.compare').textContent(), /A100/);

  // A saved scenario's link opens what was saved (the budget and price with it).
  await page.locator('#ex-save-name').fill('round trip');
  await page.locator('section.saved button[type="submit"]').click();
  const link = page.locator('.saved-list a', { hasText: 'round trip' });
  await link.waitFor();
  // (The saved link opens in the page's mode: a saved scenario names none.)
  await page.goto(server.base + '?mode=extended&model=llama3-70b&gpus=1024');
  await scenario(page);
  await page.locator('.saved-list a', { hasText: 'round trip' }).click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('model') === 'llama3-8b');
  const restored = await reloadSame('a saved link');
  assert.equal(restored.summary, first.summary, 'the saved link opens the saved scenario');
  assert.deepEqual([restored.budget, restored.unit], ['2e11', 'samples']);

  // The strip's Studies link: Studies sweeps this scenario, a reload keeps the sweep, Back returns.
  await page.locator('#ex-tab-breakdown').click();
  await page.locator('section.sensitivity[data-state="done"]').waitFor({ timeout: 180_000 });
  await page.locator('.sens-row[data-feature="matrix"] a.sens-link').click();
  await page.waitForURL(/view=studies/);
  const studies = new URL(page.url()).searchParams;
  for (const [k, v] of [['s.model', 'llama3-8b'], ['s.system', 'nvidia_h100_sxm5_80gb'], ['s.gpus', '64']]) {
    assert.equal(studies.get(k), v, `${k}: ${page.url()}`);
  }
  await page.locator('#sweep-summary').waitFor({ timeout: 120_000 });
  const sweepShown = async () => ({
    summary: (await page.locator('#sweep-summary').textContent()).replace(/ in [\d.]+ m?s$/, ''),
    points: await page.locator('#sweep-points tbody').textContent(),
  });
  const sweep = await sweepShown();
  const studiesUrl = page.url();
  await page.reload();
  await page.locator('#sweep-summary').waitFor({ timeout: 120_000 });
  assert.deepEqual(await sweepShown(), sweep, 'the sweep, reloaded');
  assert.equal(page.url(), studiesUrl);
  await page.goBack();
  assert.equal((await scenario(page)).summary, first.summary, 'Back returns to the scenario');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('GB200 NVL72 without a domain key searches its own domain of 72, as the field says', async () => {
  const page = await newPage(browser);
  for (const query of [
    '?system=nvidia_gb200_nvl72&gpus=2304&model=llama3-70b',
    '?mode=extended&system=nvidia_gb200_nvl72&gpus=2304&model=llama3-70b',
  ]) {
    await page.goto(server.base + query);
    const s = await scenario(page);
    assert.match(s.summary, /scale-up domain 72 ·/, query);
    assert.match(await page.locator('#ex-domain').getAttribute('placeholder'), /^72$/);
    // A click keeps it; Save pins no domain the user did not type.
    await page.locator('[role="tablist"] [data-list="1d"]').click();
    assert.equal(new URL(page.url()).searchParams.get('domain'), '', page.url());
    await page.reload();
    assert.match((await scenario(page)).summary, /scale-up domain 72 ·/);
  }
  await page.locator('#ex-save-name').fill('nvl72');
  await page.locator('section.saved button[type="submit"]').click();
  await page.locator('.saved-list a', { hasText: 'nvl72' }).waitFor();
  const saved = await page.evaluate(() => Object.values(localStorage).join(' '));
  assert.doesNotMatch(saved, /domain=8/, saved);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a comma in a switch value is refused at its field, and correcting it clears the error', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?mode=extended`);
  await scenario(page);
  await page.locator('.mode-switches-wrap > summary').click();
  const field = page.locator('#switch-loss_chunks');
  const error = page.locator('#switch-loss_chunks-error');
  const before = page.url();
  await field.fill('1,024');
  await field.press('Enter');
  await field.blur();
  await assert.doesNotReject(error.filter({ hasText: 'comma' }).waitFor({ timeout: 5_000 }));
  assert.match(await error.textContent(), /“1,024” has a comma: .*loss.*write 1024/i);
  assert.equal(await field.getAttribute('aria-invalid'), 'true');
  assert.equal(page.url(), before, 'nothing is written into the URL');
  assert.equal(await field.inputValue(), '1,024', 'the value stays as typed');
  await screenshot(page, 'switch-comma');
  await field.fill('1024');
  await field.blur();
  await page.waitForFunction(() => !document.querySelector('#switch-loss_chunks-error').textContent.trim());
  assert.equal(await field.getAttribute('aria-invalid'), 'false');
  assert.match(decodeURIComponent(page.url()), /loss_chunks=1024/);
  // A hand-written URL with the comma: the error sits at the switch and names it; a correction clears it.
  await page.goto(`${server.base}?mode=extended&ext=recompute%3Dfull,loss_chunks%3D1,024`);
  await error.filter({ hasText: 'comma' }).waitFor({ timeout: 30_000 });
  await field.fill('1024');
  await field.blur();
  await page.waitForFunction(() => !document.querySelector('#switch-loss_chunks-error').textContent.trim());
  await settled(page);
  assert.match(decodeURIComponent(page.url()), /recompute=full,loss_chunks=1024(&|$)/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
