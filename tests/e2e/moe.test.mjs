// Mixture-of-Experts in the Explorer (issue 12): the page shows the same top configurations as
// `fmperf search` for an MoE scenario, with the expert layout (EP, ETP) the search chose in the
// table, the placement, the drill-down and the exports, and the MoE parts of the step (expert
// compute, router, all-to-all exposed and hidden).
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

/** `fmperf search` (extended mode, the CLI's default, as the page's) with the binary in
 *  FMPERF_BIN, else `cargo run --release` from this tree; returns its JSON. */
function cli({ model, system, gpus, batch, domain, strategy, top }) {
  const args = ['search', '--model', model, '--system', system, '--strategy', strategy, '--gpus', String(gpus),
    '--global-batch', String(batch), '--domain', String(domain), '--top', String(top), '--format', 'json'];
  const options = { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, timeout: 600_000 };
  const out = process.env.FMPERF_BIN
    ? execFileSync(process.env.FMPERF_BIN, args, options)
    : execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', ...args], options);
  return JSON.parse(out);
}

const rows = (page) => page.locator('table.results tbody tr');

/** Every listed row (collapsed placements included) in rank order. */
async function shown(page) {
  await page.waitForFunction(() => !document.querySelector('.run-status') && !document.querySelector('.results-body.stale')
    && document.querySelector('table.results tbody tr'), null, { timeout: 120_000 });
  const heads = await page.locator('table.results thead th').allTextContents();
  const col = (name) => heads.findIndex((h) => h.trim() === name);
  const [ep, etp] = [col('EP'), col('ETP')];
  const list = await rows(page).evaluateAll((trs, [ep, etp]) =>
    trs.map((tr) => ({
      rank: Number(tr.dataset.rank),
      throughput: Number(tr.dataset.throughput),
      config: tr.dataset.config,
      ep: ep >= 0 ? Number(tr.children[ep].textContent) : null,
      etp: etp >= 0 ? Number(tr.children[etp].textContent) : null,
    })).sort((a, b) => a.rank - b.rank), [ep, etp]);
  return { heads, list };
}

const SCENARIO = {
  model: 'mixtral-8x7b', system: 'nvidia_h100_sxm5_80gb', gpus: 128, batch: 512, domain: 8, top: 10,
};

test('an MoE scenario: the page lists the CLI\'s best configurations with their EP and ETP', async () => {
  const s = SCENARIO;
  const strategies = ['1d', '2d-seqp'];
  const per = Object.fromEntries(strategies.map((st) => [st, cli({ ...s, strategy: st })]));
  const expected = strategies
    .flatMap((st) => per[st].results)
    .sort((a, b) => b.throughput_samples_per_s - a.throughput_samples_per_s)
    .slice(0, s.top);
  assert.equal(expected.length, s.top, 'the CLI finds enough configurations');
  assert.ok(expected.every((r) => r.config.ep >= 1 && r.config.etp >= 1 && r.config.edp >= 1), 'the CLI writes ep/etp/edp');

  const page = await newPage(browser);
  await page.goto(`${server.base}?mode=extended&model=${s.model}&system=${s.system}&domain=${s.domain}&gpus=${s.gpus}`
    + `&batch=${s.batch}&strategies=${strategies.join(',')}&top=${s.top}`);
  const { heads, list } = await shown(page);
  assert.ok(heads.includes('EP') && heads.includes('ETP'), `headers: ${heads}`);
  assert.equal(list.length, s.top);
  // The same configurations, in the same order, with the same throughput and expert layout.
  assert.deepEqual(list.map((r) => r.throughput), expected.map((r) => r.throughput_samples_per_s));
  assert.deepEqual(list.map((r) => r.config), expected.map((r) => r.code));
  assert.deepEqual(list.map((r) => [r.ep, r.etp]), expected.map((r) => [r.config.ep, r.config.etp]));
  assert.ok(list.some((r) => r.ep > 1), 'some configuration splits the experts');
  await screenshot(page, 'explorer-moe-1280');

  // Breakdown of the best: placement lists the expert layers' split; the MoE note names the parts.
  const best = expected[0];
  const ep = page.locator('.placement-table tr[data-dim="EP"]');
  await ep.waitFor({ timeout: 30_000 });
  assert.equal(Number((await ep.locator('td').nth(1).textContent()).trim()), best.config.ep);
  const etp = page.locator('.placement-table tr[data-dim="ETP"]');
  assert.equal(Number((await etp.locator('td').nth(1).textContent()).trim()), best.config.etp);
  const edp = page.locator('.placement-table tr[data-dim="EDP"]');
  assert.equal(Number((await edp.locator('td').nth(1).textContent()).trim()), best.config.edp);
  assert.match(await page.locator('.moe-note').textContent(), /routed-expert GEMMs.*router.*EP all-to-all is .* exposed dispatch and combine.*hidden/);

  // Layers view: the MoE parts, all-to-all exposed and hidden adding up to what was priced.
  await page.locator('button[data-tab="layers"]').click();
  const moeTime = page.locator('table.moe-time');
  await moeTime.waitFor({ timeout: 30_000 });
  const parts = await moeTime.locator('tbody tr').evaluateAll((trs) =>
    Object.fromEntries(trs.map((tr) => [tr.querySelector('th').textContent, tr.querySelector('td.num').textContent])));
  for (const k of ['router', 'routed experts (grouped GEMMs)', 'all-to-all dispatch and combine, exposed', 'all-to-all hidden behind compute']) {
    assert.ok(k in parts, `${k} in ${JSON.stringify(parts)}`);
  }
  assert.ok(parseFloat(parts['routed experts (grouped GEMMs)']) > 0);
  assert.match(await page.locator('table.moe-figures').textContent(), new RegExp(`EP ${best.config.ep} · ETP ${best.config.etp}`));
  await screenshot(page, 'explorer-moe-layers-1280');

  // Exports: the JSON rows carry ep/etp/edp as the CLI writes them; the CSV has the columns.
  const [json] = await Promise.all([page.waitForEvent('download'), page.locator('.results-card button', { hasText: 'JSON' }).click()]);
  const doc = JSON.parse(readFileSync(await json.path(), 'utf8'));
  assert.deepEqual(doc.results.map((r) => r.config), expected.map((r) => r.config));
  assert.equal(doc.results[0].expert_placement_groups[0].name, 'EP');
  const [csv] = await Promise.all([page.waitForEvent('download'), page.locator('.results-card button', { hasText: 'CSV' }).click()]);
  const lines = readFileSync(await csv.path(), 'utf8').trim().split('\n');
  const header = lines[0].split(',');
  const first = lines[1].split(',');
  assert.equal(Number(first[header.indexOf('ep')]), best.config.ep);
  assert.equal(Number(first[header.indexOf('etp')]), best.config.etp);
  assert.deepEqual(page.errors, []);
});

test('a dense model shows no expert columns', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?mode=extended&model=llama3-8b&system=nvidia_h100_sxm5_80gb&gpus=64&batch=512&strategies=1d&top=5`);
  const { heads } = await shown(page);
  assert.ok(!heads.includes('EP') && !heads.includes('ETP'), `headers: ${heads}`);
  assert.deepEqual(page.errors, []);
});

test('an MoE model in reference mode says it is priced as a dense model, and one click opens it in extended mode', async () => {
  const page = await newPage(browser);
  const s = SCENARIO;
  await page.goto(`${server.base}?mode=reference&model=${s.model}&system=${s.system}&gpus=${s.gpus}&batch=${s.batch}&strategies=1d&top=5`);
  const { heads } = await shown(page);
  assert.ok(!heads.includes('EP'), 'reference mode has no experts');
  const notice = page.locator('.moe-reference');
  assert.match(await notice.textContent(), /Mixture-of-Experts model \(8 experts, top-2\).*dense MLP/);
  await notice.getByRole('button', { name: 'Use extended mode' }).click();
  await page.waitForURL(/mode=extended/);
  await page.locator('table.results thead th', { hasText: /^EP$/ }).waitFor({ timeout: 60_000 });
  assert.equal(await notice.count(), 0);
  // The error bar names the model's class and stands on the shipped MoE runs' held-out errors.
  const bar = await page.locator('#ex-error-bar').textContent();
  assert.match(bar, /mixture-of-experts models/);
  assert.match(bar, /leave-one-source-out/);
  assert.deepEqual(page.errors, []);
});

test('compare works across dense and MoE: each column says its expert layout', async () => {
  const s = SCENARIO;
  const moe = cli({ ...s, strategy: '1d', top: 1 }).results[0];
  const dense = cli({ ...s, model: 'llama3-8b', strategy: '1d', top: 1 }).results[0];
  const pins = [`${s.model}~${s.system}~${s.domain}~${s.batch}~${moe.code}`, `llama3-8b~${s.system}~${s.domain}~${s.batch}~${dense.code}`];
  const page = await newPage(browser);
  await page.goto(`${server.base}?mode=extended&model=${s.model}&system=${s.system}&domain=${s.domain}&gpus=${s.gpus}`
    + `&batch=${s.batch}&strategies=1d&top=5&tab=compare&cmp=${pins.join(',')}`);
  const row = page.locator('table.compare tr', { hasText: 'experts: EP · ETP · expert DP' });
  await row.waitFor({ timeout: 60_000 });
  const cells = (await row.locator('td').allTextContents()).map((t) => t.trim());
  assert.deepEqual(cells, [`${moe.config.ep} · ${moe.config.etp} · ${moe.config.edp}`, '– (dense)']);
  // The pinned MoE configuration is priced as the search ranked it.
  const tput = page.locator('table.compare tr', { hasText: 'throughput [samples/s]' }).locator('td').first();
  assert.equal((await tput.textContent()).trim(), moe.throughput_samples_per_s.toFixed(2));
  assert.deepEqual(page.errors, []);
});
