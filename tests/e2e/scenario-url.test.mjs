// Issue 29, §1: the URL keeps the scenario. Every control of the explorer, clicked on a page, writes
// a URL that reloads into the same scenario (model, system, domain, devices, batch and mode, as the
// results' summary line states them); a system's own scale-up domain when the URL has none; a comma
// in a switch value refused at its field, the error gone once corrected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, resultsSettled, screenshot, sharedBrowser } from './harness.mjs';

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
