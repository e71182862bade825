// A newcomer's hour (issues 14, 16 §5, 11 §8): the page opens in extended mode on a run people
// make today; old permalinks keep their mode; GB200 NVL72 and every system option work from the
// page and the URL; an empty result names its cause; numbers read as typed (2k, 4k); rows that
// differ only in placement collapse; the mainstream filter; the user's own system is usable in the
// Explorer and a Study and survives a reload; the paper figure's series are pairwise distinct; an
// exported SVG holds no framework comments; a custom element follows its attributes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { newPage, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const param = (page, k) => new URL(page.url()).searchParams.get(k);

/** Waits until the search of the URL's scenario has finished; returns the results body's text. */
async function settled(page, timeout = 90_000) {
  await page.waitForFunction(() => !document.querySelector('.run-status') && !document.querySelector('.results-body.stale')
    && document.querySelector('table.results tbody tr, .nothing-fits, .results-card .notice.error'), null, { timeout });
  return page.locator('.results-card').textContent();
}

test('a fresh page opens in extended mode on Llama 3 70B, 1,024 H100, the model\'s own batch', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await settled(page);
  assert.equal(await page.locator('#results-mode').getAttribute('data-mode'), 'extended');
  assert.equal(await page.locator('#ex-model').inputValue(), 'llama3-70b');
  assert.equal(await page.locator('#ex-system').inputValue(), 'nvidia_h100_sxm5_80gb');
  assert.equal(await page.locator('#ex-gpus').inputValue(), '1024');
  assert.match(await page.locator('#ex-batch').getAttribute('placeholder'), /2048 \(the model's own\)/);
  assert.match(await page.locator('.results-card .summary').textContent(), /1,024 devices · global batch 2,048/);
  assert.ok(await page.locator('table.results tbody tr').count() > 0);
  // An edit writes the mode with the scenario, so the new permalink is not read as an old one.
  await page.locator('#ex-gpus').fill('2k');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('gpus') === '2k');
  assert.equal(param(page, 'mode'), 'extended');
  await settled(page);
  assert.match(await page.locator('.results-card .summary').textContent(), /2,000 devices/);
  await page.reload();
  await settled(page);
  assert.equal(await page.locator('#results-mode').getAttribute('data-mode'), 'extended');
  assert.deepEqual(page.errors, []);
});

test('an old permalink without a mode shows what it showed: reference mode, old defaults, nvs read as domain', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?gpus=512&nvs=64`);
  await settled(page);
  assert.equal(await page.locator('#results-mode').getAttribute('data-mode'), 'reference');
  assert.equal(await page.locator('#ex-model').inputValue(), 'gpt3_1T');
  assert.equal(await page.locator('#ex-domain').inputValue(), '64');
  assert.match(await page.locator('.results-card .summary').textContent(), /scale-up domain 64 · 512 devices · global batch 4,096/);
  // Editing it keeps reference mode and writes the new key name.
  await page.locator('#ex-gpus').fill('1024');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('gpus') === '1024');
  assert.equal(param(page, 'mode'), 'reference');
  assert.equal(param(page, 'domain'), '64');
  assert.equal(param(page, 'nvs'), null);
  assert.deepEqual(page.errors, []);
});

test('GB200 NVL72 is usable from the page and the URL, with every system option', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?mode=extended`);
  await settled(page);
  const option = page.locator('#ex-system option[value="nvidia_gb200_nvl72"]');
  assert.equal(await option.isDisabled(), false);
  await page.selectOption('#ex-system', 'nvidia_gb200_nvl72');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('system')?.startsWith('nvidia_gb200_nvl72'));
  // The options the CLI's system spec has are all in the form.
  for (const k of ['nics', 'scale_up', 'scale_out', 'vector']) await page.locator(`#ex-sys-${k}`).waitFor({ state: 'attached' });
  await page.locator('#ex-sys-precision').waitFor({ state: 'attached' });
  // The CLI's syntax in the URL: NVL72 at 2,304 GPUs (32 domains of 72) gives candidates.
  await page.goto(`${server.base}?mode=extended&model=llama3-70b&system=nvidia_gb200_nvl72,scale_out%3D50,nics%3D2&domain=72&gpus=2304&batch=4096`);
  const text = await settled(page);
  assert.equal(await page.locator('#ex-sys-scale_out').inputValue(), '50');
  assert.equal(await page.locator('#ex-sys-nics').inputValue(), '2');
  assert.ok(await page.locator('table.results tbody tr').count() > 0, text);
  await screenshot(page, 'newcomer-gb200-nvl72-2304');
  // A bad option is reported at its field, in the CLI's rule.
  await page.locator('#ex-sys-nics').fill('two');
  await page.locator('#ex-sys-nics-error').filter({ hasText: /positive integer/ }).waitFor();
  // Options as separate URL keys are read too.
  await page.goto(`${server.base}?mode=reference&model=gpt3&system=nvidia_h100_sxm5_80gb&scale_out=100&gpus=64&batch=512`);
  await settled(page);
  assert.equal(await page.locator('#ex-sys-scale_out').inputValue(), '100');
  assert.deepEqual(page.errors, []);
});

test('a domain larger than the device count is flagged', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?mode=reference&model=gpt3&system=ref-H200&domain=64&gpus=32&batch=512`);
  await settled(page);
  assert.match(await page.locator('.field', { has: page.locator('#ex-domain') }).textContent(), /Larger than the 32 devices/);
});

test('an empty or reduced result names its real cause and verified alternatives', async () => {
  const page = await newPage(browser);
  // 7 GPUs cannot all be used by GPT-2 XL: the results use fewer devices, and the page says why.
  await page.goto(`${server.base}?mode=reference&model=gpt2-xl&system=ref-A100&domain=8&gpus=7&batch=512`);
  await settled(page);
  assert.ok(await page.locator('table.results tbody tr').count() > 0);
  assert.match(await page.locator('#ex-widening').textContent(), /7/);
  await screenshot(page, 'newcomer-fewer-devices');
  // Nothing fits: the cause is memory, with the leanest need, and device counts that fit (each
  // checked by a search).
  await page.goto(`${server.base}?mode=reference&model=gpt3_1T&system=ref-H200&domain=8&gpus=8&batch=4096`);
  await settled(page);
  const empty = page.locator('.nothing-fits');
  assert.equal(await empty.getAttribute('data-cause'), 'memory');
  const text = await empty.textContent();
  assert.match(text, /No configuration fits in memory/);
  assert.match(text, /leanest needs/);
  assert.ok(await empty.locator('.suggestions li').count() > 0, text);
  await screenshot(page, 'newcomer-nothing-fits');
  assert.deepEqual(page.errors, []);
});

test('rows that differ only in placement collapse under the best; headers say TP, CP; the mainstream filter', async () => {
  const page = await newPage(browser);
  // The 1d list of the published study's scenario has configurations placed in several ways.
  await page.goto(`${server.base}?mode=reference&list=1d`);
  await settled(page);
  const heads = await page.locator('table.results thead th').allTextContents();
  for (const h of ['DP', 'TP', 'CP', 'PP', 'mbs']) assert.ok(heads.includes(h), `${heads}`);
  const alts = page.locator('table.results tr.placement-alt');
  assert.ok(await alts.count() > 0, 'the 1d list has placement variants');
  assert.equal(await alts.first().isVisible(), false);
  // Visible rows never share strategy and dimensions.
  const visible = await page.locator('table.results tbody tr:not([hidden])').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td.dim')].map((td) => td.textContent).join('|') + tr.querySelector('.badge.strategy').textContent));
  assert.equal(new Set(visible).size, visible.length);
  await page.locator('.placements-toggle').first().click();
  assert.equal(await alts.first().isVisible(), true);
  // SUMMA 2D is marked as research; the filter leaves it out.
  await page.goto(`${server.base}?mode=reference&list=2d`);
  await settled(page);
  assert.ok(await page.locator('table.results .badge.research').count() > 0);
  await page.locator('#ex-mainstream').check();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('only') === 'mainstream');
  assert.equal(await page.locator('table.results .badge.research').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('a system saved in the Catalog view is usable in the Explorer and a Study, and after a reload', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=catalog&tab=systems&edit=copy:nvidia_h100_sxm5_80gb`);
  await page.locator('.editor').waitFor({ timeout: 30_000 });
  await page.locator('button[data-action="save"]').click();
  await page.locator('.flash').waitFor();
  const id = 'nvidia_h100_sxm5_80gb-custom';
  await page.goto(`${server.base}?mode=extended`);
  await settled(page);
  const option = page.locator(`#ex-system option[value="${id}"]`);
  assert.match(await option.textContent(), /\(yours\)/);
  await page.selectOption('#ex-system', id);
  await page.waitForFunction((id) => new URL(location.href).searchParams.get('system') === id, id);
  await settled(page);
  assert.ok(await page.locator('table.results tbody tr').count() > 0);
  assert.match(await page.locator('#ex-yours').textContent(), /lives in this browser only.*export it/s);
  await page.reload();
  await settled(page);
  assert.equal(await page.locator('#ex-system').inputValue(), id);
  assert.ok(await page.locator('table.results tbody tr').count() > 0);
  // The same system in a Study.
  await page.goto(`${server.base}?view=studies&mode=extended&s.model=llama3-8b&s.system=${id}&s.global-batch=512&ax.gpus=8,16`);
  await page.locator('#sweep-summary').waitFor({ timeout: 60_000 });
  assert.equal(await page.locator('#sweep-error').count(), 0);
  assert.match(await page.locator(`#sweep-system option[value="${id}"]`).textContent(), /\(yours\)/);
  await screenshot(page, 'newcomer-study-own-system');
  // A copy of a system the reference model does not describe natively (wafer-scale) keeps its
  // statement of fit under the Study's table, looked up among the user's entries.
  await page.goto(`${server.base}?view=catalog&tab=systems&edit=copy:cerebras_cs2`);
  await page.locator('.editor').waitFor({ timeout: 30_000 });
  await page.locator('button[data-action="save"]').click();
  await page.locator('.flash').waitFor();
  await page.goto(`${server.base}?view=studies&mode=reference&s.model=gpt3&s.system=cerebras_cs2-custom&ax.gpus=1,2`);
  await page.locator('#sweep-summary').waitFor({ timeout: 60_000 });
  assert.match(await page.locator('#sweep-model-fit').textContent(), /Cerebras.*wafer/is);
  assert.deepEqual(page.errors, []);
});

test('the paper figure\'s 9 series are pairwise distinct; an exported SVG holds no framework comments', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&preset=strong-scaling&panel=gpt3_1T`);
  await page.locator('#sweep-summary').waitFor({ timeout: 90_000 });
  const styles = await page.locator('g.fc-series').evaluateAll((gs) => gs.map((g) => g.dataset.style));
  assert.ok(styles.length >= 9, `${styles.length} series`);
  assert.equal(new Set(styles).size, styles.length, `${styles}`);
  const button = page.getByRole('button', { name: /SVG/ }).first();
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  const svg = readFileSync(await download.path(), 'utf8');
  assert.match(svg, /<svg/);
  assert.doesNotMatch(svg, /<!--/);
  assert.deepEqual(page.errors, []);
});

test('a custom element re-renders when an attribute changes after load', async () => {
  const page = await newPage(browser);
  await page.goto(server.base + 'embed.html');
  const two = page.locator('#demo-element-2');
  await two.locator('table.results tbody tr').first().waitFor({ timeout: 60_000 });
  await page.evaluate(() => document.getElementById('demo-element-2').setAttribute('gpus', '512'));
  await two.locator('.results-card .summary', { hasText: '512 devices' }).waitFor({ timeout: 60_000 });
  assert.deepEqual(page.errors, []);
});

test('unknown view= and preset= values get a message naming the known ones', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=charts`);
  assert.match(await page.locator('#unknown-view').textContent(), /no view “charts”.*explorer, studies/);
  await page.goto(`${server.base}?view=studies&preset=nope&panel=x`);
  assert.match(await page.locator('#unknown-preset').textContent(), /no preset “nope”.*strong-scaling/);
  assert.deepEqual(page.errors, []);
});

test('each predicted time carries an error bar from the measured runs (or says there are none)', async () => {
  const page = await newPage(browser);
  await page.goto(server.base);
  await settled(page);
  const bar = page.locator('#ex-error-bar');
  await bar.waitFor({ timeout: 120_000 });
  assert.match(await bar.textContent(), /±\d+ %|no runs/);
  assert.match(await bar.textContent(), /run/);
  assert.ok(await page.locator('table.results .err-bar').count() > 0);
  assert.deepEqual(page.errors, []);
});
