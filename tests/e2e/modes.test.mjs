// Reference and extended mode in the page: the mode panel (toggle and every switch of extended
// mode) lives in the URL and survives a reload, results carry a badge naming the mode that
// produced them, the page's extended-mode sweep equals `fmperf sweep --mode extended` byte for
// byte, the accelerator sparsity panel sets the study's speed-ups next to extended mode's, and a
// bad switch is reported at the switch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { newPage, screenshot, ROOT, sharedBrowser } from './harness.mjs';

/** Unfolds the extended-mode switches (folded while all are at their defaults). */
async function openSwitches(page) {
  const wrap = page.locator('details.mode-switches-wrap');
  await wrap.waitFor();
  if ((await wrap.getAttribute('open')) === null) await wrap.locator('summary').click();
}

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** `fmperf sweep …` through cargo (release build of the CLI). */
function cli(args) {
  return execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', 'sweep', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
}

/** The text of a download triggered by clicking `selector`. */
async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await download.path(), 'utf8');
}

/** Waits until the results badge names `text` (a finished sweep in that mode). */
async function resultsIn(page, text) {
  await page.waitForFunction((t) => document.querySelector('#results-mode')?.textContent === t, text, {
    timeout: 60_000,
  });
}

const param = (page, key) => new URL(page.url()).searchParams.get(key);
const firstDays = (page) => page.locator('#sweep-points tr[data-status="ok"] td.days').first().textContent();

test('studies: the mode toggle and the switches rerun the sweep, live in the URL and survive a reload', async () => {
  const page = await newPage(browser);
  const query = 's.model=gpt3_1T&s.system=B200&s.global-batch=4096&ax.gpus=256..1024';
  await page.goto(`${server.base}?view=studies&${query}`);
  await resultsIn(page, 'reference mode');
  assert.equal(await page.locator('#mode-panel').getAttribute('data-mode'), 'reference');
  assert.equal(await page.locator('#mode-switches').count(), 0);
  const reference = await firstDays(page);

  await page.click('#mode-panel button[data-mode="extended"]');
  await resultsIn(page, 'extended mode (default switches)');
  assert.equal(param(page, 'mode'), 'extended');
  // Every switch is shown and editable.
  // (the MoE switches, kernel fusion, the attention kernel, and the physics switches of tp overlap, gradient reduction, optimizer and
  // memory options, the compiled loss and the pipeline split included; since session 15 the ZeRO parameter broadcast and the
  // context-parallel flavour and its Ulysses degree; since session 20 the optimizer, Adam or Muon; since session 21 Megatron's per-step statistics;
  // since session 25 the output head inside the loss chunks; since session 26 Megatron's gradient-accumulation fusion, the operator-level
  // policy's saved attention, autocast over FP32 weights and the keys and values held by the output; since session 27 Megatron's
  // layer spec, Transformer Engine or local; since session 30 whether the TP input gradient's all-reduce overlaps the weight-gradient
  // GEMM; since session 32 the Hugging Face Trainer's own step and whether the loss upcasts the logits to FP32; since session 33
  // Megatron-Core's RoPE fusion)
  assert.equal(await page.locator('#mode-switches .mode-switch').count(), 52);
  const extended = await firstDays(page);
  assert.notEqual(extended, reference);
  // The chart and the table say which mode drew them.
  assert.match(await page.locator('#sweep-chart svg .fc-title').first().textContent(), /extended/);
  assert.equal(await page.locator('#points-mode').getAttribute('data-mode'), 'extended');

  await openSwitches(page);
  await page.selectOption('#switch-recompute', 'full');
  await resultsIn(page, 'extended mode (recompute=full)');
  await page.locator('#switch-causal').uncheck();
  await resultsIn(page, 'extended mode (recompute=full, causal=off)');
  assert.equal(param(page, 'ext'), 'recompute=full,causal=off');
  const switched = await firstDays(page);
  assert.notEqual(switched, extended);
  await page.locator('#switch-matmul_efficiency').fill('0.5');
  await page.locator('#switch-matmul_efficiency').press('Enter');
  await resultsIn(page, 'extended mode (matmul_efficiency=0.5, recompute=full, causal=off)');
  const tuned = await firstDays(page);
  assert.notEqual(tuned, switched);
  await screenshot(page, 'modes-studies-extended');

  // The page's points are `fmperf sweep --mode extended --ext …`, byte for byte.
  const pageJson = await downloadText(page, '#sweep-json');
  const cliJson = cli(['--model', 'gpt3_1T', '--system', 'B200', '--global-batch', '4096', '--axis', 'gpus=256..1024',
    '--mode', 'extended', '--ext', 'matmul_efficiency=0.5,recompute=full,causal=off', '--format', 'json']);
  assert.equal(pageJson, cliJson);
  const first = JSON.parse(pageJson.split('\n')[0]);
  assert.equal(first.mode, 'extended');
  assert.equal(first.switches.recompute, 'full');
  assert.match(await page.locator('#sweep-cli').textContent(), /--mode extended --ext matmul_efficiency=0.5,recompute=full,causal=off/);

  await page.reload();
  await resultsIn(page, 'extended mode (matmul_efficiency=0.5, recompute=full, causal=off)');
  assert.equal(await page.locator('#switch-recompute').inputValue(), 'full');
  assert.equal(await page.locator('#switch-causal').isChecked(), false);
  assert.equal(await page.locator('#switch-matmul_efficiency').inputValue(), '0.5');
  assert.equal(await firstDays(page), tuned);

  // Back to reference mode: the reference numbers again; the switches stay in the URL.
  await page.click('#mode-panel button[data-mode="reference"]');
  await resultsIn(page, 'reference mode');
  assert.equal(await firstDays(page), reference);
  assert.equal(param(page, 'ext'), 'matmul_efficiency=0.5,recompute=full,causal=off');
  await page.click('#mode-panel button[data-mode="extended"]');
  await resultsIn(page, 'extended mode (matmul_efficiency=0.5, recompute=full, causal=off)');
  await page.click('#mode-reset');
  await resultsIn(page, 'extended mode (default switches)');
  assert.equal(await firstDays(page), extended);
  assert.deepEqual(page.errors, []);
});

test('studies: the sparsity panel runs in extended mode next to the study\'s speed-ups', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&preset=accelerators&panel=sparsity`);
  await resultsIn(page, 'extended mode (default switches)');
  assert.match(await page.locator('#panel-mode').textContent(), /runs in extended mode/);
  const rows = page.locator('#sweep-compare tbody tr');
  assert.equal(await rows.count(), 4);
  const published = await page.locator('#sweep-compare td.published').allTextContents();
  assert.deepEqual(published, ['1.9', '2.1', '3.79', '3.79']);
  const predicted = (await page.locator('#sweep-compare td.predicted').allTextContents()).map(Number);
  assert.ok(predicted.every((v, i) => v > 1 && (i === 0 || v > predicted[i - 1])), `${predicted}`);
  // The stand-in values are said in the notes.
  assert.match(await page.locator('.studies-notes').last().textContent(), /stands in/);
  await screenshot(page, 'modes-studies-sparsity');
  // The same panel in reference mode: the sparse points say why they have no value.
  await page.click('#mode-panel button[data-mode="reference"]');
  await resultsIn(page, 'reference mode');
  assert.equal(await page.locator('#sweep-points tr[data-status="unsupported"]').count(), 8);
  assert.match(await page.locator('#panel-mode').textContent(), /Shown now in reference mode/);
  assert.match(await page.locator('#sweep-cli').textContent(), /--preset accelerators --panel sparsity --mode reference/);
  assert.deepEqual(page.errors, []);
});

test('studies: a paper preset in extended mode sets the published values next to extended mode\'s', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&preset=strong-scaling&panel=gpt3_1T&mode=extended`);
  await resultsIn(page, 'extended mode (default switches)');
  assert.match(await page.locator('#compare-summary').textContent(), /next to extended mode's/);
  assert.equal(await page.locator('#sweep-compare .badge.bad').count(), 0);
  assert.match(await page.locator('#panel-mode').textContent(), /runs in reference mode.*Shown now in extended mode/s);
  await screenshot(page, 'modes-studies-strong-scaling-extended');
  assert.deepEqual(page.errors, []);
});

test('studies: a bad switch is reported at the switch and starts nothing', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=studies&mode=extended&ext=weight_sparsity=2`);
  const sw = page.locator('.mode-switch[data-switch="weight_sparsity"]');
  // In the user's words: the value and the rule, not the JSON path.
  await sw.locator('.field-error').filter({ hasText: /“2”/ }).waitFor();
  assert.equal(await sw.locator('input').inputValue(), '2');
  assert.equal(await page.locator('#sweep-summary').count(), 0);
  await sw.locator('input').fill('0.5');
  await sw.locator('input').press('Enter');
  await resultsIn(page, 'extended mode (weight_sparsity=0.5)');
  // B200 is a GPU (extended mode prices the catalog part): the sparsity has no effect, and the
  // notes say so.
  assert.match(await page.locator('details.studies-notes').textContent(), /has no effect on nvidia_b200_hgx/);
  await page.goto(`${server.base}?view=studies&mode=fast`);
  await page.locator('#mode-error').filter({ hasText: 'mode = fast' }).waitFor();
  assert.deepEqual(page.errors, []);
});

/** `fmperf search …` (JSON) through cargo. */
function search(args) {
  const out = execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', 'search', ...args,
    '--format', 'json'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(out);
}

/** Waits until the explorer shows finished results whose badge names `mode` (its text). */
async function explorerIn(page, text) {
  await page.waitForFunction((t) => document.querySelector('#results-mode')?.textContent === t
    && !document.querySelector('.run-status') && !document.querySelector('.results-body.stale')
    && document.querySelector('table.results tbody tr'), text, { timeout: 120_000 });
}

const best = (page) => page.locator('table.results tbody tr').first().evaluate((tr) => ({
  throughput: Number(tr.dataset.throughput),
  config: tr.dataset.config,
}));

test('explorer: extended mode changes the best result and the URL; a reload restores it', async () => {
  const page = await newPage(browser);
  // Reference mode's default scenario is the published study's (gpt3_1T on H200, 4,096 GPUs).
  await page.goto(`${server.base}?view=explorer&mode=reference`);
  await explorerIn(page, 'reference mode');
  const reference = await best(page);

  await page.click('#mode-panel button[data-mode="extended"]');
  await explorerIn(page, 'extended mode (default switches)');
  assert.equal(param(page, 'mode'), 'extended');
  const extended = await best(page);
  assert.notEqual(extended.throughput, reference.throughput);
  // 2D SUMMA has no extended model: no 2d list, and no 2d row.
  assert.equal(await page.locator('.tabs [data-list="2d"]').count(), 0);
  const strategies = await page.locator('table.results .badge.strategy').allTextContents();
  assert.ok(strategies.length > 0 && strategies.every((s) => s !== '2d'), `${strategies}`);

  await openSwitches(page);
  await page.selectOption('#switch-recompute', 'full');
  await explorerIn(page, 'extended mode (recompute=full)');
  assert.equal(param(page, 'ext'), 'recompute=full');
  const full = await best(page);
  assert.notEqual(full.throughput, extended.throughput);
  // The page's best 2d-seqp configuration is `fmperf search --mode extended`'s.
  await page.click('.tabs [data-list="2d-seqp"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('list') === '2d-seqp');
  const seqp = await best(page);
  const cliBest = search(['--model', 'gpt3_1T', '--system', 'H200', '--strategy', '2d-seqp', '--gpus', '4096',
    '--global-batch', '4096', '--nvlink-size', '8', '--top', '1', '--mode', 'extended', '--ext', 'recompute=full']);
  assert.equal(cliBest.mode, 'extended');
  assert.equal(seqp.throughput, cliBest.results[0].throughput_samples_per_s);

  // The selected configuration and the drill-down say which mode computed them.
  await page.click('#ex-tab-layers');
  await page.locator('.panel-layers[data-mode="extended"]').waitFor();
  assert.match(await page.locator('#layers-mode').textContent(), /extended mode/);
  // The host parts from core's one list (`HostPart::ALL`), in the drill-down's step table.
  assert.deepEqual(await page.locator('.panel-layers tr[data-host-part]').evaluateAll((rows) => rows.map((r) => r.dataset.hostPart)),
    ['step_host', 'layer_python']);
  await screenshot(page, 'modes-explorer-extended');

  await page.reload();
  await explorerIn(page, 'extended mode (recompute=full)');
  assert.equal(await page.locator('#switch-recompute').inputValue(), 'full');
  assert.deepEqual(await best(page), seqp);
  await page.locator('.panel-layers[data-mode="extended"]').waitFor();

  // Back to reference mode: the published model's best again, with its layer table.
  await page.click('#mode-panel button[data-mode="reference"]');
  await page.click('.tabs [data-list="all"]');
  await explorerIn(page, 'reference mode');
  assert.deepEqual(await best(page), reference);
  await page.locator('.panel-layers table.layers').waitFor();
  assert.match(await page.locator('#layers-mode').textContent(), /reference mode/);
  assert.deepEqual(page.errors, []);
});

test('explorer: a precision the part does not list is reported at the switch', async () => {
  const page = await newPage(browser);
  // The reference H200 file lists no FP8 (the page's default H100 SXM5 part does).
  await page.goto(`${server.base}?view=explorer&mode=extended&ext=precision=fp8&system=ref-H200`);
  const sw = page.locator('.mode-switch[data-switch="precision"]');
  await sw.locator('.field-error').filter({ hasText: /“fp8”/ }).waitFor();
  // H200 as a catalog part has FP8: choosing it makes the scenario valid again.
  await page.selectOption('#ex-system', 'nvidia_h200_sxm_141gb');
  await explorerIn(page, 'extended mode (precision=fp8)');
  assert.equal(await sw.locator('.field-error').textContent(), '');
  assert.deepEqual(page.errors, []);
});
