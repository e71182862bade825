// The studies view: presets render and reproduce the paper, the page's sweep output equals the
// CLI's byte for byte, heat maps mark infeasible cells, bad axes are reported at the field,
// sweeps can be cancelled, chart settings live in the URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { newPage, screenshot, ROOT, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Opens the studies view with `query` and waits for the finished sweep; returns the wait [ms]. */
async function openStudies(page, query, timeout = 60_000) {
  const t0 = Date.now();
  await page.goto(`${server.base}?view=studies&${query}`);
  await page.locator('#sweep-summary').waitFor({ timeout });
  return Date.now() - t0;
}

/** The text of a download triggered by clicking `selector`. */
async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await download.path(), 'utf8');
}

/** `fmperf sweep …` through cargo, as the issue asks (release build of the CLI). */
function cli(args) {
  return execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', 'sweep', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
}

test('the strong-scaling preset reproduces every published value of both tables', async () => {
  const page = await newPage(browser);
  let ms = await openStudies(page, 'preset=strong-scaling&panel=gpt3_1T');
  assert.match(await page.locator('#compare-summary').textContent(), /^56 of 56 published values/);
  assert.equal(await page.locator('#sweep-compare .badge.bad').count(), 0);
  // One line per system and domain size: 9 series in the legend.
  assert.equal(await page.locator('#sweep-chart[data-kind="line"] svg').count(), 1);
  const summary = await page.locator('#sweep-summary').textContent();
  assert.match(summary, /^117 points \(69 with a configuration that fits\)/);
  await screenshot(page, 'studies-strong-scaling-gpt3_1T');
  await page.click('button[data-preset="strong-scaling"][data-panel="vit_era5"]');
  await page.waitForFunction(() => /^31 of 31/.test(document.querySelector('#compare-summary')?.textContent ?? ''), null, {
    timeout: 60_000,
  });
  assert.ok(new URL(page.url()).searchParams.get('panel') === 'vit_era5');
  const vitSummary = await page.locator('#sweep-summary').textContent();
  await screenshot(page, 'studies-strong-scaling-vit_era5');
  const seconds = (text) => Number(/in ([\d.]+) s$/.exec(text)[1]);
  console.log(`strong-scaling preset in the browser: gpt3_1T ${seconds(summary)} s + vit_era5 ${seconds(vitSummary)} s ` +
    `of sweeping (gpt3_1T panel on screen ${ms} ms after navigation)`);
  assert.deepEqual(page.errors, []);
});

test('the page and `fmperf sweep --format json` give the same points, byte for byte', async () => {
  const page = await newPage(browser);
  const axes = ['nvlink=8,64', 'gpus=128..2048'];
  await openStudies(
    page,
    's.model=gpt3_1T&s.system=B200&s.global-batch=4096&' + axes.map((a) => `ax.${a}`).join('&'),
  );
  const pageJson = await downloadText(page, '#sweep-json');
  // A permalink without a mode is reference mode; the CLI defaults to extended, so say reference.
  const cliJson = cli(['--mode', 'reference', '--model', 'gpt3_1T', '--system', 'B200', '--global-batch', '4096',
    ...axes.flatMap((a) => ['--axis', a]), '--format', 'json']);
  assert.equal(pageJson, cliJson);
  const points = pageJson.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(points.length, 10);
  assert.ok(points.some((p) => p.status === 'ok' && p.best.days > 0));
  // The command the page shows is the one that was run.
  assert.match(await page.locator('#sweep-cli').textContent(), /fmperf sweep --model gpt3_1T --system ref-B200/);
  const csv = await downloadText(page, '#sweep-csv');
  assert.ok(csv.startsWith('index,axis domain [devices],axis gpus [devices],model,system'));
  assert.equal(csv.trim().split('\n').length, 11);
  assert.deepEqual(page.errors, []);
});

test('a preset panel gives the CLI preset numbers', async () => {
  const page = await newPage(browser);
  await openStudies(page, 'preset=accelerators&panel=accumulation-a100');
  const pageJson = await downloadText(page, '#sweep-json');
  const cliLines = cli(['--preset', 'accelerators', '--panel', 'accumulation-a100', '--format', 'json'])
    .trim().split('\n').map((l) => JSON.parse(l));
  const pageLines = pageJson.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(pageLines.length, cliLines.length);
  for (const [a, b] of pageLines.map((p, i) => [p, cliLines[i]])) {
    delete b.preset;
    delete b.panel;
    assert.deepEqual(a, b);
  }
  // Measured figures of the accelerator study sit next to the model's, with the difference.
  assert.ok((await page.locator('#sweep-compare .badge').first().textContent()).includes('measured'));
  await screenshot(page, 'studies-accumulation');
  assert.deepEqual(page.errors, []);
});

test('heat maps: TP × PP with infeasible cells, hardware sweeps around B200-next', async () => {
  const page = await newPage(browser);
  await openStudies(page, 'preset=design-space&panel=gpt3_1T-1d');
  const chart = page.locator('#sweep-chart[data-kind="heatmap"] svg');
  await chart.waitFor();
  const rows = await page.locator('#sweep-points tbody tr').count();
  assert.equal(rows, 8 * 6);
  assert.ok((await page.locator('#sweep-points tr[data-status="out_of_memory"]').count()) > 0);
  assert.ok((await page.locator('#sweep-points tr[data-status="ok"]').count()) > 0);
  await screenshot(page, 'studies-design-space');
  await openStudies(page, 'preset=hardware&panel=vit_era5-hbm');
  await page.locator('#sweep-chart[data-kind="heatmap"] svg').waitFor();
  assert.equal(await page.locator('#sweep-points tbody tr').count(), 25);
  await screenshot(page, 'studies-hardware-hbm');
  assert.deepEqual(page.errors, []);
});

test('accelerator study: block micro-benchmark and what the model cannot describe', async () => {
  const page = await newPage(browser);
  await openStudies(page, 'preset=accelerators&panel=block');
  // CS-2, SN30 and Bow lack published figures: their lines are not drawn and the table says why
  // (Gaudi2 is drawn with its estimated vector rate).
  assert.match(await page.locator('#sweep-not-drawn').textContent(), /SambaNova SN30/);
  assert.ok((await page.locator('#sweep-points tr[data-status="invalid"]').count()) > 0);
  await screenshot(page, 'studies-block');
  // The sparsity panel is an extended-mode study; in reference mode its sparse points say why
  // they have no value (4 models × 2 sparse values).
  await openStudies(page, 'preset=accelerators&panel=sparsity&mode=reference');
  const unsupported = page.locator('#sweep-points tr[data-status="unsupported"]');
  assert.equal(await unsupported.count(), 8);
  assert.match(await unsupported.first().textContent(), /not in the reference model/);
  await openStudies(page, 'preset=accelerators&panel=beyond-gpus');
  // CS-2, SN30 and Bow name their missing figures; A100, MI250X and Gaudi2 have values.
  assert.equal(await page.locator('#sweep-points tr[data-status="invalid"]').count(), 3);
  await screenshot(page, 'studies-beyond-gpus');
  assert.deepEqual(page.errors, []);
});

test('a bad axis is reported at its field and starts nothing; the form edits the URL', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&s.model=gpt3_1T&s.system=B200&ax.gpus=0`);
  const row = page.locator('.axis-row[data-axis="gpus"]');
  // In the user's words: the value and the rule, not the JSON path.
  await row.locator('.field-error').filter({ hasText: /“0”/ }).waitFor();
  assert.equal(await page.locator('#sweep-summary').count(), 0);
  await row.locator('input.axis-values').fill('256..1024');
  await row.locator('input.axis-values').press('Enter');
  await page.locator('#sweep-summary').waitFor();
  assert.equal(new URL(page.url()).searchParams.get('ax.gpus'), '256..1024');
  await page.selectOption('#sweep-add-axis', 'hbm_bandwidth');
  await page.waitForFunction(() => /^9 points/.test(document.querySelector('#sweep-summary')?.textContent ?? ''), null, {
    timeout: 30_000,
  });
  assert.equal(await page.locator('#sweep-point-count').textContent(), '9 points');
  assert.equal(new URL(page.url()).searchParams.get('ax.hbm_bandwidth'), 'x0.5,x1,x2');
  await screenshot(page, 'studies-form');
  assert.deepEqual(page.errors, []);
});

test('a long sweep shows progress and can be cancelled; chart settings are permalinks', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&s.model=gpt3_1T&s.system=B200&ax.nvlink=4..256&ax.gpus=4..16384&ax.hbm_capacity=x0.5,x1,x2`);
  await page.locator('#sweep-cancel').waitFor({ timeout: 30_000 });
  const before = await page.locator('#sweep-progress-text').textContent();
  assert.match(before, /Sweeping… \d+ %/);
  await page.click('#sweep-cancel');
  await page.locator('#sweep-run').waitFor();
  assert.equal(await page.locator('#sweep-cancel').count(), 0);
  // Chart settings: switch to a heat map of nvlink × gpus, reload, same chart.
  await page.goto(`${server.base}?view=studies&s.model=gpt3_1T&s.system=B200&ax.nvlink=8,64&ax.gpus=256..1024`);
  await page.locator('#sweep-summary').waitFor();
  await page.selectOption('#chart-kind', 'heatmap');
  await page.locator('#sweep-chart[data-kind="heatmap"]').waitFor();
  await page.selectOption('#chart-metric', 'mem_gb');
  await page.reload();
  await page.locator('#sweep-chart[data-kind="heatmap"]').waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('#chart-metric').inputValue(), 'mem_gb');
  assert.deepEqual(page.errors, []);
});
