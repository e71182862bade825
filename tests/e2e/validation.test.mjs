// The validation view: both modes' summaries with the leave-one-source-out error as the headline,
// memory next to time per source, the predicted-vs-measured scatter, every run with its numbers, the
// skipped runs with reasons, the mode switch in the URL, and the leave-one-source-out refit in the
// browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const pct = (text) => Number.parseFloat(text.replace(/[^0-9.+-]/g, ''));

test('summary, scatter, rows and skipped runs of both modes', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=validation`);
  const summary = page.locator('#validation-summary');
  await summary.waitFor({ timeout: 30_000 });
  // The held-out (leave-one-source-out) errors of the shipped runs come from core's cache at once.
  await page.locator('#validation-summary[data-loso="done"]').waitFor({ timeout: 5_000 });
  const headline = await page.locator('#validation-headline').textContent();
  assert.match(headline, /^extended mode: \d+ runs evaluated, \d+ skipped; leave-one-source-out .*mean \|error\| \d+\.\d %.*in-sample beside it: mean \|error\| \d+\.\d %/);

  // One line per source plus the overall line; extended mode (held out) beats reference mode.
  const overall = summary.locator('tr[data-source="all"]');
  const refMape = pct(await overall.locator('td[data-mode="reference"][data-col="mape"]').textContent());
  const extMape = pct(await overall.locator('td[data-mode="extended"][data-col="mape"]').textContent());
  const extInSample = pct(await overall.locator('td[data-mode="extended"][data-col="mape-in-sample"]').textContent());
  assert.ok(extMape > 0 && extMape <= 20, `extended held-out mean |error| ${extMape} %`);
  assert.ok(extInSample > 0 && extInSample <= extMape + 1e-9, `in-sample ${extInSample} % vs held out ${extMape} %`);
  assert.ok(refMape > 2 * extMape, `reference ${refMape} % vs extended ${extMape} %`);
  assert.equal(await summary.locator('tbody tr').count(), 9, 'eight sources and the overall line');

  // Memory next to time, per source: the training sources with their held-out time error, the
  // memory sources with their memory error and verdicts; every memory run listed with its kind.
  const both = page.locator('#validation-time-memory');
  assert.match(await both.locator('tr[data-source="Narayanan et al. 2021"] td[data-col="time-loso"]').textContent(), /^\d+\.\d %$/);
  // ... beside it the one-shot error (calibrated on one other run of the source): Narayanan's runs
  // scatter around an offset that one run removes, so it is well below the held-out error.
  const narayanan = both.locator('tr[data-source="Narayanan et al. 2021"]');
  const oneShot = pct(await narayanan.locator('td[data-col="time-one-shot"]').textContent());
  assert.ok(oneShot > 0 && oneShot < pct(await narayanan.locator('td[data-col="time-loso"]').textContent()), `one-shot ${oneShot} %`);
  const bloom = both.locator('tbody tr').filter({ hasText: 'BigScience tr11 BLOOM-176B' });
  assert.match(await bloom.locator('td[data-col="memory-mape"]').textContent(), /^\d+\.\d %$/);
  assert.match(await bloom.locator('td[data-col="fits"]').textContent(), /^\d+ \/ \d+ \/ \d+ \(\d+ OOM/);
  assert.equal(await page.locator('#validation-memory-rows tbody tr').count(), 109);
  assert.match(await page.locator('#validation-memory-headline').textContent(), /109 peak-memory runs/);
  const oomRow = page.locator('#validation-memory-rows tr[data-id="bloom_prequel_h14336_l82_a128_dp8_tp4_pp12_mbs2_gbs2048_0228"]');
  assert.match(await oomRow.textContent(), /out of memory/);

  // Ranking of layouts: the 15 shipped layout groups (4 sources + all) and the groups among the
  // training runs; tau-b and regret per source, every group listed.
  const sweeps = page.locator('#ranking-sweeps');
  assert.equal(await sweeps.locator('tbody tr').count(), 5);
  assert.match(await sweeps.locator('tr[data-source="all sources"] td[data-col="tau"]').textContent(), /^[+-]\d\.\d\d$/);
  assert.match(await sweeps.locator('tr[data-source="all sources"] td[data-col="regret"]').textContent(), /^\d+\.\d %$/);
  assert.ok((await page.locator('#ranking-groups tbody tr').count()) >= 15);
  assert.equal(await page.locator('#ranking-groups tr[data-group="internlm_7b_1024gpu"]').count(), 1);

  // Every run is listed; evaluated ones show both numbers.
  const rows = page.locator('#validation-rows tbody tr');
  assert.equal(await rows.count(), 108);
  const first = page.locator('#validation-rows tr[data-id="narayanan21_t1_1p7b"]');
  assert.equal((await first.locator('td[data-col="measured"]').textContent()).trim(), '137');
  assert.match(await first.locator('td[data-mode="extended"][data-col="error"]').textContent(), /^[+-]\d+\.\d %$/);

  // The scatter has one point per evaluated run of the mode shown, and a legend per source.
  const scatter = page.locator('#validation-scatter svg').first();
  await scatter.waitFor();
  assert.match(await scatter.textContent(), /extended mode/);
  assert.match(await scatter.textContent(), /Narayanan et al\. 2021/);

  // Skipped runs carry their reason, naming the missing number.
  const skipped = page.locator('#validation-skipped .skipped[data-mode="extended"] li[data-id="nemo_longseq_llama2_7b_8k"]');
  assert.match(await skipped.textContent(), /global batch absent/);

  // The switches of extended mode are all listed.
  // (39 since session 15: the ZeRO parameter broadcast, the context-parallel flavour and its Ulysses degree;
  // 40 since session 20: the optimizer, Adam or Muon; 42 since session 21: Megatron's per-step statistics, zeros in gradients and the parameter norm)
  assert.equal(await page.locator('#validation-switches tbody tr').count(), 42);
  await screenshot(page, 'validation-extended');

  // Switching the mode updates the URL, the scatter title and the settings card.
  await page.locator('button.mode-button[data-mode="reference"]').click();
  await page.waitForFunction(() => new URLSearchParams(location.search).get('mode') === 'reference');
  await page.locator('#validation-settings .settings[data-mode="reference"]').waitFor();
  assert.match(await page.locator('#validation-scatter svg').first().textContent(), /reference mode/);
  assert.match(await page.locator('#validation-headline').textContent(), /reference mode: 79 runs evaluated/);
  await screenshot(page, 'validation-reference');
  assert.deepEqual(page.errors, []);
});

test('the mode comes from the URL and the refit runs in the browser', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?view=validation&mode=reference`);
  await page.locator('#validation-settings .settings[data-mode="reference"]').waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('button.mode-button[data-mode="reference"]').getAttribute('aria-pressed'), 'true');

  await page.locator('#fit-run').click();
  const result = page.locator('#fit-result');
  // The refit is ~22 s of CPU natively (every source held out in turn); a loaded 2-core machine
  // needs several times that. This test checks what the refit shows; `fmperf bench` measures speed.
  await result.waitFor({ timeout: 240_000 });
  const text = await result.textContent();
  assert.match(text, /leave-one-source-out mean \|error\| \d+\.\d %/);
  // One row per source with evaluated runs (torchtitan among them since the 96 GB H100 has figures).
  assert.equal(await page.locator('#validation-fit .fit-table tbody tr').count(), 7);
  await screenshot(page, 'validation-fit');
  assert.deepEqual(page.errors, []);
});

test('a 390 px dark screen shows the view without sideways scrolling', async () => {
  const page = await newPage(browser, { viewport: { width: 390, height: 800 }, colorScheme: 'dark' });
  await page.goto(`${server.base}?view=validation`);
  await page.locator('#validation-summary').waitFor({ timeout: 30_000 });
  await page.locator('#validation-scatter svg').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow} px wider than the window (tables scroll inside their box)`);
  await screenshot(page, 'validation-390-dark');
  assert.deepEqual(page.errors, []);
});
