// "Your run" (issue 18 §3): pasting a Megatron-LM launch script or a torchtitan TOML into the
// Explorer shows the same prediction as `fmperf estimate --from FILE --format json` on that file,
// with the unused flags listed; a malformed file shows one clear error; the file's scenario can be
// searched in the Explorer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newPage, resultsSettled, screenshot, ROOT, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** `fmperf estimate --from FILE … --format json` (the binary in FMPERF_BIN, else cargo run). */
function estimate(file, ...more) {
  const args = ['estimate', '--from', file, ...more, '--format', 'json'];
  const options = { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24, timeout: 600_000 };
  const out = process.env.FMPERF_BIN
    ? execFileSync(process.env.FMPERF_BIN, args, options)
    : execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', ...args], options);
  return JSON.parse(out);
}

/** Opens the Explorer's "Your run" tab and pastes `text`. */
async function paste(page, text) {
  await page.goto(`${server.base}?tab=run`);
  const area = page.locator('textarea.launch-text');
  await area.waitFor({ timeout: 60_000 });
  await area.fill(text);
}

/** The exact values the panel shows, by metric. */
async function shown(page) {
  await page.locator('.launch-result').waitFor({ timeout: 30_000 });
  return page.locator('.launch-headline dd').evaluateAll((dds) =>
    Object.fromEntries(dds.map((dd) => [dd.dataset.metric, Number(dd.querySelector('[data-value]').dataset.value)])),
  );
}

for (const [name, file] of [
  ['Megatron-LM script', 'examples/launch/megatron-llama3-70b.sh'],
  ['torchtitan TOML', 'examples/launch/torchtitan-llama3-8b.toml'],
]) {
  test(`pasting the ${name} shows the CLI's prediction and the unused flags`, async () => {
    const cli = estimate(file);
    const page = await newPage(browser);
    await paste(page, readFileSync(path.join(ROOT, file), 'utf8'));
    const got = await shown(page);
    assert.equal(got.time_per_step_s, cli.time_per_step_s, 'time per step');
    assert.equal(got.tokens_per_s, cli.tokens_per_s, 'tokens/s');
    assert.equal(got.mfu, cli.mfu, 'MFU');
    assert.equal(got.memory_gb, cli.memory.predicted_gb, 'memory per device');
    // The printed numbers are the exact ones rounded.
    const stepText = await page.locator('[data-metric="time_per_step_s"] [data-value]').textContent();
    assert.equal(stepText.trim(), cli.time_per_step_s.toFixed(3));
    // The configuration and every unused flag of the CLI are listed.
    const config = await page.locator('.launch-config').textContent();
    const c = cli.config;
    assert.ok(config.includes(`tp ${c.tp} · pp ${c.pp}`) && config.includes(`dp ${c.dp} · mbs ${c.mbs}`), config);
    const keys = await page.locator('table.launch-unused tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
    assert.deepEqual(keys, cli.unused.map((u) => u.key));
    assert.ok(keys.length > 5);
    assert.equal(await page.locator('.launch-result').getAttribute('data-fits'), cli.memory.fits);
    await screenshot(page, `launch-${path.basename(file)}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test('a malformed file shows one error naming the flag; the device override applies', async () => {
  const page = await newPage(browser);
  await paste(page, 'torchrun pretrain_gpt.py --num-layers eighty --hidden-size 4096');
  const err = page.locator('.launch-error');
  await err.waitFor({ timeout: 30_000 });
  assert.match(await err.textContent(), /--num-layers/);
  // The Megatron example on twice the devices: data parallelism doubles.
  const text = readFileSync(path.join(ROOT, 'examples/launch/megatron-llama3-70b.sh'), 'utf8');
  await page.locator('textarea.launch-text').fill(text);
  await page.locator('input.launch-gpus').fill('128');
  await page.locator('.launch-result').waitFor();
  assert.match(await page.locator('.launch-config').textContent(), /dp 4 · mbs 1/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the file's scenario is searched in the Explorer", async () => {
  const page = await newPage(browser);
  await paste(page, readFileSync(path.join(ROOT, 'examples/launch/torchtitan-llama3-8b.toml'), 'utf8'));
  await page.locator('button.launch-search').click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('model') === 'llama3-8b');
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('gpus'), '8');
  assert.equal(url.searchParams.get('batch'), '8');
  assert.equal(url.searchParams.get('mode'), 'extended');
  await page.locator('table.results tbody tr').first().waitFor({ timeout: 60_000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Issue 29 §1: "Search this scenario" pins nothing the user did not set. On GB200 NVL72 (its own
// scale-up domain of 72), from a page that had a domain of 4, a budget, a price and rank-by-cost,
// the Explorer it opens searches the file's scenario with the system's own domain and no budget,
// price or rank of the page before; a reload shows the same.
test('"Search this scenario" on GB200 NVL72 opens the file\'s scenario with its own domain and no budget or price', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.base}?tab=run&mode=extended&model=llama3-8b&system=nvidia_h100_sxm5_80gb&domain=4&gpus=64&batch=512&budget=1e12&unit=tokens&price=2.5&rank=cost`);
  const area = page.locator('textarea.launch-text');
  await area.waitFor({ timeout: 60_000 });
  await page.locator('input.launch-system').fill('nvidia_gb200_nvl72');
  await area.fill(readFileSync(path.join(ROOT, 'examples/launch/megatron-llama3-70b.sh'), 'utf8'));
  await page.locator('.launch-result').waitFor({ timeout: 30_000 });
  assert.match(await page.locator('.launch-result').textContent(), /nvidia_gb200_nvl72 × 64 devices/);
  const config = await page.locator('.launch-config').textContent();
  const gbs = config.match(/global batch ([\d,]+)/)[1].replace(/,/g, '');
  await page.locator('button.launch-search').click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('model') === 'llama3-70b');
  const q = new URL(page.url()).searchParams;
  assert.equal(q.get('system'), 'nvidia_gb200_nvl72');
  assert.equal(q.get('gpus'), '64');
  assert.equal(q.get('batch'), gbs);
  assert.equal(q.get('mode'), 'extended');
  assert.ok(!q.get('domain'), `no domain pinned: ${page.url()}`);
  for (const key of ['budget', 'unit', 'price', 'rank']) assert.equal(q.get(key), null, `${key}: ${page.url()}`);
  const summary = async () => {
    // The page's own search (llama3-8b) may still be shown, marked stale, while the file's runs.
    await resultsSettled(page);
    await page.locator('.results-card .summary').waitFor();
    return (await page.locator('.results-card .summary').textContent()).replace(/ in \d+ ms/, '').trim();
  };
  const shownBefore = await summary();
  assert.match(shownBefore, /^llama3-70b on NVIDIA GB200 NVL72/);
  assert.match(shownBefore, new RegExp(`scale-up domain 72 · 64 devices · global batch ${Number(gbs).toLocaleString('en-US')}`));
  assert.equal(await page.locator('#ex-domain').inputValue(), '');
  assert.equal(await page.locator('#ex-budget').inputValue(), '');
  assert.equal(await page.locator('#ex-price').inputValue(), '');
  await page.reload();
  assert.equal(await summary(), shownBefore, 'a reload shows the same scenario');
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Issue 27 §2 and §4: a launch script and its DeepSpeed JSON opened together are read as one run
// (the CLI's numbers for `--from script --from json`); the best layout is found in the page and
// written back as Megatron flags, which read back as that layout.
test('a launch script and its DeepSpeed JSON together; the best layout copied back as flags', async () => {
  const script = 'examples/launch/megatron-deepspeed-gpt-13b.sh';
  const ds = 'examples/launch/ds_config_gpt_13b.json';
  const system = 'nvidia_a100_sxm4_80gb';
  const cli = estimate(script, '--from', ds, '--system', system);
  const page = await newPage(browser);
  await page.goto(`${server.base}?tab=run`);
  await page.locator('textarea.launch-text').waitFor({ timeout: 60_000 });
  await page.locator('input.launch-system').fill(system);
  // Both files at once, the JSON first: the script is shown, the JSON read with it.
  await page.locator('input.launch-file').setInputFiles([path.join(ROOT, ds), path.join(ROOT, script)]);
  await page.locator('.launch-companions li').waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('.launch-companions li').getAttribute('data-file'), 'ds_config_gpt_13b.json');
  assert.match(await page.locator('textarea.launch-text').inputValue(), /pretrain_gpt\.py/);
  const got = await shown(page);
  assert.equal(got.time_per_step_s, cli.time_per_step_s, 'time per step');
  assert.equal(got.memory_gb, cli.memory.predicted_gb, 'memory per device');
  const config = await page.locator('.launch-config').textContent();
  assert.ok(config.includes(`global batch ${cli.config.global_batch}`) && config.includes('zero1'), config);
  await page.locator('button.launch-find-best').click();
  const line = page.locator('.launch-best-line');
  await line.waitFor({ timeout: 60_000 });
  assert.ok(Number(await line.getAttribute('data-speedup')) >= 1 - 1e-9);
  const flags = await page.locator('textarea.launch-emitted').inputValue();
  assert.match(flags, /pretrain_gpt\.py/);
  assert.match(flags, /--tensor-model-parallel-size/);
  await page.locator('button.launch-copy').click();
  // The page says what the copy did (copied, or how to copy where the browser refuses).
  await page.waitForFunction(() => document.querySelector('.launch-action')?.textContent.trim().length > 0);
  await screenshot(page, 'launch-best-layout');
  // Read back by the CLI: the degrees of the best line, on the same devices.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fmperf-emit-'));
  const file = path.join(dir, 'run-best.sh');
  writeFileSync(file, flags);
  const back = estimate(file, '--system', system);
  const text = await line.textContent();
  const c = back.config;
  assert.ok(text.startsWith(`tp ${c.tp} · pp ${c.pp}`) && text.includes(`dp ${c.dp} · mbs ${c.mbs}`), `${text} vs ${JSON.stringify(c)}`);
  assert.equal(c.tp * c.pp * c.cp * c.dp, 32);
  // The other formats are offered too.
  await page.locator('select.launch-emit-format').selectOption('torchtitan');
  assert.match(await page.locator('textarea.launch-emitted').inputValue(), /\[parallelism\]/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
