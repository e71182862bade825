// "Your run" (issue 18 §3): pasting a Megatron-LM launch script or a torchtitan TOML into the
// Explorer shows the same prediction as `fmperf estimate --from FILE --format json` on that file,
// with the unused flags listed; a malformed file shows one clear error; the file's scenario can be
// searched in the Explorer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newPage, screenshot, ROOT, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** `fmperf estimate --from FILE --format json` (the binary in FMPERF_BIN, else cargo run). */
function estimate(file) {
  const args = ['estimate', '--from', file, '--format', 'json'];
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
