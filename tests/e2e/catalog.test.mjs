// The catalog view: every entry with units and sources, search, mapping, the validating editor
// (a table of bad inputs), custom entries that survive a reload, import/export, storage problems,
// narrow and dark screens, and no console errors anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newPage, screenshot, sharedBrowser, ROOT } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const REFERENCE_PRESETS = ['gpt3', 'gpt3_1T', 'vit_era5', 'ref-A100', 'ref-H200', 'ref-B200', 'ref-B200-next'];

async function open(page, query) {
  await page.goto(`${server.base}?view=catalog${query ? '&' + query : ''}`);
  await page.locator('.catalog-head .tabs').waitFor({ timeout: 30_000 });
}

const card = (page, id) => page.locator(`.entry[data-id="${id}"]`);

/** Opens an entry's detail (clicking its header) and returns the card. */
async function expand(page, id) {
  const c = card(page, id).first();
  if ((await c.getAttribute('class')).split(' ').includes('open') === false) {
    await c.locator('.entry-head').click();
  }
  await c.locator('.entry-body').waitFor();
  return c;
}

test('every built-in entry renders its fields with units and at least one source', async () => {
  const page = await newPage(browser);
  for (const tab of ['models', 'systems']) {
    await open(page, `tab=${tab}`);
    const ids = await page.locator('.builtin-list .entry').evaluateAll((els) => els.map((e) => e.dataset.id));
    assert.ok(ids.length > 20, `${tab}: ${ids.length} entries`);
    for (const id of ids) {
      const c = await expand(page, id);
      const rows = await c.locator('table.fields tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({
          path: tr.dataset.path,
          numeric: tr.dataset.numeric === 'true',
          value: tr.querySelector('td.value').textContent.trim(),
          unit: tr.querySelector('td.unit').textContent.trim(),
        })),
      );
      const numbers = rows.filter((r) => r.numeric && r.value !== 'unknown');
      assert.ok(numbers.length >= 1, `${id}: numeric fields ${JSON.stringify(rows)}`);
      for (const r of rows.filter((r) => r.numeric)) {
        assert.ok(r.unit !== '' && r.unit !== '—', `${id}.${r.path} has no unit`);
        if (r.value !== 'unknown') assert.ok(Number.isFinite(Number(r.value)), `${id}.${r.path} = ${r.value}`);
      }
      const sources = await c.locator('ol.sources li').allTextContents();
      assert.ok(sources.length >= 1 && sources.every((s) => s.trim().length > 10), `${id}: sources ${sources}`);
      const badges = (await c.locator('.entry-badges .badge').allTextContents()).join(' | ');
      assert.equal(badges.includes('reference preset'), REFERENCE_PRESETS.includes(id), `${id}: badges ${badges}`);
      if (tab === 'systems') await c.locator('.mapping-panel').waitFor();
      await c.locator('.entry-head').click(); // close again
    }
  }
  assert.deepEqual(page.errors, []);
});

test('GenSLM fields show their sources and approximated systems say why', async () => {
  const page = await newPage(browser);
  // Every GenSLM dimension is filled from a source, shown in the field table (issue 15).
  await open(page, 'tab=models&entry=genslm-13b');
  let c = card(page, 'genslm-13b');
  await c.locator('tr[data-path="field_sources.ffn_hidden"]').waitFor();
  assert.match(await c.locator('tr[data-path="ffn_hidden"]').textContent(), /19968/);
  assert.match(await c.locator('tr[data-path="field_sources.ffn_hidden"]').textContent(), /Brown et al\. 2020/);
  assert.match(await c.locator('tr[data-path="field_sources.hidden"]').textContent(), /Emani et al\. 2023/);
  await open(page, 'tab=models&entry=llama3-8b');
  c = card(page, 'llama3-8b');
  assert.match(await c.locator('.entry-badges').textContent(), /approximated by reference mode/);
  const verdict = await c.locator('.verdict').textContent();
  assert.match(verdict, /grouped-query attention \(8 key\/value heads for 32 query heads\)/);
  assert.match(verdict, /gated MLP \(SwiGLU/);
  for (const [id, arch] of [['cerebras_cs2', 'wafer-scale'], ['sambanova_sn40l', 'dataflow'], ['graphcore_bow_ipu', 'ipu'], ['google_tpu_v5p', 'torus']]) {
    await open(page, `tab=systems&entry=${id}`);
    c = card(page, id);
    assert.match(await c.locator('.entry-badges').textContent(), new RegExp(`${arch}: model approximates it`));
    const fit = await c.locator('.verdict').textContent();
    assert.match(fit, new RegExp(`Not what the model was made for \\(${arch}\\)`), `${id}: ${fit}`);
  }
  assert.deepEqual(page.errors, []);
});

test('the mapping shows which peak and which bandwidth direction the model reads', async () => {
  const page = await newPage(browser);
  await open(page, 'tab=systems&entry=nvidia_h100_sxm5_80gb');
  const c = card(page, 'nvidia_h100_sxm5_80gb');
  const row = (p) => c.locator(`table.mapping tr[data-param="${p}"]`);
  await row('matrix_flops_fp16').waitFor();
  assert.match(await row('matrix_flops_fp16').textContent(), /989\.4.*TFLOP\/s.*peak_tflops\.bf16: dense BF16 matrix peak/);
  assert.match(await row('nvlink_bandwidth').textContent(), /450.*GB\/s.*bw_per_device_unidir_gbps: per device, one direction/);
  assert.match(await row('ib_bandwidth').textContent(), /50.*per NIC, one direction/);
  await c.locator('.mapping-panel select').selectOption('fp8');
  assert.match(await row('matrix_flops_fp16').textContent(), /1978\.9.*peak_tflops\.fp8/);
  assert.match(await c.locator('ul.approximations').textContent(), /fp8: every tensor priced at 1 byte/);
  const domain = c.locator('.mapping-panel input').first();
  await domain.fill('0');
  assert.equal(await domain.getAttribute('aria-invalid'), 'true');
  assert.match(await c.locator('.map-field .field-error').first().textContent(), /must be an integer from 1/);
  await domain.fill('72');
  assert.match(await row('nvlink_size').textContent(), /72.*the domain size you chose/);
  assert.match(await c.locator('ul.approximations').textContent(), /hypothetical system/);
  // A part without the numbers: the reason, not a crash; the missing number can be given.
  await open(page, 'tab=systems&entry=cerebras_cs2');
  assert.match(await card(page, 'cerebras_cs2').locator('.mapping-error').textContent(), /lists no BF16 matrix rate/);
  // SambaNova SN40L: rates, memory and its 16-chip domain are published, its vector rate and
  // links are not: the message names each missing figure and the numbers can be given here.
  await open(page, 'tab=systems&entry=sambanova_sn40l');
  const gb = card(page, 'sambanova_sn40l');
  const why = await gb.locator('.mapping-error').textContent();
  assert.match(why, /lists no vector \(non-matrix\) rate/);
  assert.match(why, /scale_out\.nic_gbps_per_device \(scale_out=\)/);
  const out = gb.locator('.map-field[data-key="scale_out"] input');
  await out.fill('fast');
  assert.match(await gb.locator('.map-field[data-key="scale_out"] .field-error').textContent(), /must be a positive number/);
  await gb.locator('.map-field[data-key="vector"] input').fill('50');
  await gb.locator('.map-field[data-key="scale_up"] input').fill('200');
  await out.fill('100');
  assert.match(await gb.locator('tr[data-param="ib_bandwidth"]').textContent(), /100.*the scale-out bandwidth you gave: per NIC, one direction/);
  assert.match(await gb.locator('tr[data-param="nvlink_size"]').textContent(), /16.*scale_up\.domain_size/);
  assert.deepEqual(page.errors, []);
});

test('search filters by name, id, family and vendor, and lives in the URL', async () => {
  const page = await newPage(browser);
  await open(page);
  const search = page.locator('.catalog-search input');
  await search.fill('llama');
  const shown = () => page.locator('.builtin-list .entry').evaluateAll((els) => els.map((e) => e.dataset.id));
  let ids = await shown();
  // Llama 2 (3), Llama 3 (3) and the two Llama 4 MoE models.
  assert.ok(ids.length === 8 && ids.every((id) => id.startsWith('llama')), ids.join());
  assert.match(page.url(), /q=llama/);
  await page.reload();
  await page.locator('.builtin-list .entry').first().waitFor();
  assert.equal(await search.inputValue(), 'llama');
  assert.equal((await shown()).length, 8);
  await search.fill('genslm 13b');
  assert.deepEqual(await shown(), ['genslm-13b', 'genslm-13b-a100']);
  await search.fill('no such thing');
  await page.locator('.empty-search').waitFor();
  await page.locator('.tabs a', { hasText: 'Systems' }).click();
  await search.fill('amd');
  ids = await shown();
  assert.ok(ids.length === 4 && ids.every((id) => id.startsWith('amd_')), ids.join());
  await search.fill('torus');
  ids = await shown();
  // Torus parts: Google's TPUs and AWS Trainium (NeuronLink torus).
  assert.ok(ids.length >= 3 && ids.every((id) => id.startsWith('google_tpu') || id.startsWith('aws_trainium')), ids.join());
  assert.ok(ids.some((id) => id.startsWith('google_tpu')), ids.join());
  assert.match(page.url(), /tab=systems/);
  assert.deepEqual(page.errors, []);
});

// Each bad input: [field, text, what the message at the field must say].
const BAD_MODEL_INPUTS = [
  ['heads', '0', 'zero is not allowed here'],
  ['heads', '-4', 'negative counts are meaningless'],
  ['heads', '1.5', 'round to a whole number, e.g. 2'],
  ['heads', 'abc', 'must be an integer from 1 to 65536 (got a string)'],
  ['heads', '20000', 'must not exceed hidden = 12288'],
  ['kv_heads', '7', 'must divide heads = 96'],
  ['id', '', 'is required: it must be 1 to 64 characters'],
  ['id', 'my model', 'e.g. my-model'],
  ['id', 'gpt3', 'is already used by a built-in model'],
  ['seq_len', '2048x', '(got a string)'],
  ['training_budget.tokens', '-1', 'must be a number greater than 0'],
];

const BAD_SYSTEM_INPUTS = [
  ['network.scale_up_eff', '1.5', 'must be a number greater than 0 and at most 1'],
  ['network.scale_out_eff', '0', 'must be a number greater than 0 and at most 1'],
  ['scale_up.domain_size', '', 'is required'],
  ['scale_up.domain_size', '-8', 'negative counts are meaningless'],
  ['memory_gb', 'eighty', '(got a string)'],
  ['peak_tflops.bf16', '0', 'the unit is TFLOP/s'],
  ['scale_up.bw_per_device_bidir_gbps', '100', 'must be at least the unidirectional 450'],
];

async function fieldError(page, path) {
  const f = page.locator(`.field[data-path="${path}"]`);
  return { input: f.locator('input, select, textarea').first(), error: f.locator('.field-error') };
}

async function checkBadInputs(page, table) {
  const save = page.locator('button[data-action="save"]');
  assert.equal(await save.isDisabled(), false, 'a fresh duplicate is valid');
  for (const [path, text, want] of table) {
    const { input, error } = await fieldError(page, path);
    const before = await input.inputValue();
    await input.fill(text);
    assert.equal(await input.getAttribute('aria-invalid'), 'true', `${path}=${text}`);
    const msg = await error.textContent();
    assert.ok(msg.includes(want), `${path}=${JSON.stringify(text)}: want “${want}”, got “${msg}”`);
    assert.ok(await save.isDisabled(), `Save must be disabled for ${path}=${text}`);
    assert.match(await page.locator('.form-summary').textContent(), /problem/);
    await input.fill(before);
    assert.equal(await input.getAttribute('aria-invalid'), 'false', `${path} back to ${before}`);
    assert.equal(await error.textContent(), '');
    assert.equal(await save.isDisabled(), false);
  }
}

test('duplicate & edit validates every field as it is typed; a fixed entry is saved and survives a reload', async () => {
  const page = await newPage(browser);
  await open(page, 'tab=models&entry=gpt3');
  await card(page, 'gpt3').getByRole('button', { name: 'Duplicate & edit' }).click();
  await page.locator('.editor').waitFor();
  assert.equal(await (await fieldError(page, 'id')).input.inputValue(), 'gpt3-custom');
  await checkBadInputs(page, BAD_MODEL_INPUTS);
  // A cross-field rule names both fields' values; fixing the other field clears it.
  const heads = (await fieldError(page, 'heads')).input;
  await heads.fill('20000');
  await (await fieldError(page, 'hidden')).input.fill('40000');
  assert.equal(await heads.getAttribute('aria-invalid'), 'false');
  await (await fieldError(page, 'hidden')).input.fill('12288');
  await heads.fill('128');
  await (await fieldError(page, 'kv_heads')).input.fill('128');
  await (await fieldError(page, 'name')).input.fill('My GPT-3 with 128 heads');
  await screenshot(page, 'catalog-editor-model');
  await page.locator('button[data-action="save"]').click();
  await page.locator('.flash').waitFor();
  assert.match(await page.locator('.flash').textContent(), /Saved model `gpt3-custom` in this browser/);
  const mine = page.locator('.mine-list .entry[data-id="gpt3-custom"]');
  await mine.locator('.entry-body').waitFor();
  assert.match(await mine.locator('tr[data-path="heads"]').textContent(), /128/);
  await page.reload();
  await mine.locator('.entry-body').waitFor();
  assert.match(await mine.locator('.entry-badges').textContent(), /yours/);
  assert.match(await mine.locator('tr[data-path="name"]').textContent(), /My GPT-3 with 128 heads/);
  // Edit it again, then delete it (asked first).
  await mine.getByRole('button', { name: 'Edit', exact: true }).click();
  await (await fieldError(page, 'layers')).input.fill('12');
  await page.locator('button[data-action="save"]').click();
  await mine.locator('tr[data-path="layers"]').waitFor();
  assert.match(await mine.locator('tr[data-path="layers"]').textContent(), /12/);
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('fmperf.custom.v1')));
  assert.equal(stored.schema_version, 1);
  assert.equal(stored.models.length, 1);
  assert.equal(stored.models[0].layers, 12);
  await mine.getByRole('button', { name: 'Delete', exact: true }).click();
  await mine.locator('button[data-confirm="delete"]').click();
  await page.locator('.mine .empty-state').waitFor();
  await page.reload();
  await page.locator('.mine .empty-state').waitFor();
  assert.deepEqual(page.errors, []);
});

/** Every form field's text by its path. */
async function formValues(page) {
  return page.locator('.editor .field[data-path]').evaluateAll((fs) =>
    Object.fromEntries(fs.map((f) => [f.dataset.path, f.querySelector('input, select, textarea').value])));
}

test('a duplicate drops the notes about a figure the user changes, keeps the rest and every typed value', async () => {
  const page = await newPage(browser);
  const id = 'nvidia_h100_sxm_96gb_hbm2e_500w';
  await open(page, `tab=systems&edit=copy:${id}`);
  await page.locator('.editor').waitFor();
  const before = await formValues(page);
  const lines = before.notes.split('\n');
  const unknownPeak = lines.find((l) => /^Peak FLOP\/s unknown/.test(l));
  const unrelated = lines.find((l) => /^Needed to reproduce/.test(l));
  assert.ok(unknownPeak && unrelated, `the entry's notes: ${before.notes}`);
  assert.match(before['field_sources.peak_tflops'], /^estimate/);
  // The user fills the BF16 peak (the figure the note calls unknown), renames, adds a note.
  await (await fieldError(page, 'peak_tflops.bf16')).input.fill('912.5');
  const notice = page.locator('.inherited-notes');
  await notice.waitFor();
  const dropped = await notice.locator('li').allTextContents();
  assert.ok(dropped.some((t) => t.includes(unknownPeak)), `dropped: ${dropped}`);
  assert.ok(dropped.some((t) => t.includes('field_sources.peak_tflops')), `dropped: ${dropped}`);
  assert.ok(!dropped.some((t) => t.includes(unrelated)), `dropped: ${dropped}`);
  // Setting the figure back brings the notes back; changing it again drops them again.
  await (await fieldError(page, 'peak_tflops.bf16')).input.fill(before['peak_tflops.bf16']);
  await notice.waitFor({ state: 'detached' });
  assert.equal((await formValues(page)).notes, before.notes);
  await (await fieldError(page, 'peak_tflops.bf16')).input.fill('912.5');
  await notice.waitFor();
  await (await fieldError(page, 'name')).input.fill('H100 96GB at 500 W, our measured peak');
  const notes = (await fieldError(page, 'notes')).input;
  const mine = 'Our BF16 peak: 912.5 TFLOP/s, the midpoint torchtitan suggests.';
  await notes.fill(`${await notes.inputValue()}\n${mine}`);
  const typed = await formValues(page);
  assert.ok(!typed.notes.includes(unknownPeak) && typed.notes.includes(unrelated) && typed.notes.includes(mine));
  await screenshot(page, 'catalog-editor-duplicate-notes');
  await page.locator('button[data-action="save"]').click();
  await page.locator('.flash').waitFor();
  await page.reload();
  const saved = page.locator(`.mine-list .entry[data-id="${before.id}"]`);
  await saved.locator('.entry-body').waitFor();
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('fmperf.custom.v1')));
  const doc = stored.systems.find((s) => s.id === before.id);
  assert.equal(doc.peak_tflops.bf16, 912.5);
  assert.ok(!doc.notes.includes(unknownPeak), 'the note about the unknown peak is gone');
  assert.ok(doc.notes.includes(unrelated) && doc.notes.includes(mine), `kept: ${doc.notes}`);
  assert.ok(doc.notes.some((n) => /^Duplicated from/.test(n)));
  assert.ok(!doc.field_sources?.peak_tflops, 'the estimate source of the peaks is gone');
  assert.match(doc.field_sources.vector, /^estimate/, 'sources of figures not changed stay');
  // Every value typed or inherited is kept: the edit form reads back exactly what was saved.
  await saved.getByRole('button', { name: 'Edit', exact: true }).click();
  await page.locator('.editor').waitFor();
  const after = await formValues(page);
  for (const [path, text] of Object.entries(typed)) {
    assert.equal(after[path].trim(), text.trim(), path);
  }
  // Editing one's own entry only asks to check such notes: nothing is removed.
  await (await fieldError(page, 'peak_tflops.bf16')).input.fill('900');
  const check = page.locator('.inherited-notes[data-policy="warn"]');
  await check.waitFor();
  assert.match(await check.textContent(), /Our BF16 peak/);
  assert.equal((await formValues(page)).notes, after.notes);
  assert.deepEqual(page.errors, []);
});

test('a duplicated system rejects bad values at their field', async () => {
  const page = await newPage(browser);
  await open(page, 'tab=systems&edit=copy:nvidia_h200_sxm_141gb');
  await page.locator('.editor').waitFor();
  await checkBadInputs(page, BAD_SYSTEM_INPUTS);
  await screenshot(page, 'catalog-editor-system');
  assert.deepEqual(page.errors, []);
});

test('no input, however wrong, breaks the editor or the mapping', async () => {
  const page = await newPage(browser);
  const weird = ['1e400', '-1e400', 'NaN', 'Infinity', '0x10', '1_000', '   ', '{', '[1, 2]', 'null', 'true', '"8"',
    '\u0000', '٣', '9'.repeat(40), 'x'.repeat(5000), '1e-400', '-0'];
  await open(page, 'tab=systems&edit=copy:nvidia_b200_hgx');
  for (const path of ['scale_up.domain_size', 'peak_tflops.bf16', 'network.scale_out_latency_s', 'id', 'architecture', 'sources']) {
    const { input } = await fieldError(page, path);
    const before = await input.inputValue();
    for (const w of weird) {
      if (path === 'architecture') break; // a select: covered by the JSON view below
      await input.fill(w);
    }
    await input.fill(before).catch(() => {});
  }
  await page.getByRole('tab', { name: 'JSON' }).click();
  const text = page.locator('#json-editor');
  for (const w of [...weird, '{"schema_version": 1, "kind": "system", "peak_tflops": [], "scale_up": {"domain_size": 1e400}}',
    '{"schema_version": 99, "kind": "scenario"}', '{"l": -1, "e": 1e400, "h": "x", "depth": null}', '[' .repeat(10000)]) {
    await text.fill(w);
  }
  await page.getByRole('tab', { name: 'Form' }).click();
  await open(page, 'tab=systems&entry=nvidia_b200_hgx');
  const panel = card(page, 'nvidia_b200_hgx').locator('.mapping-panel');
  await panel.locator('details.overrides summary').click();
  for (const key of ['domain', 'nics', 'vector', 'scale_up', 'scale_out']) {
    for (const w of weird) await panel.locator(`.map-field[data-key="${key}"] input`).fill(w);
    await panel.locator(`.map-field[data-key="${key}"] input`).fill('');
  }
  await panel.locator('table.mapping').waitFor();
  assert.deepEqual(page.errors, []);
});

test('the JSON view lists every problem of a pasted document with its field path', async () => {
  const page = await newPage(browser);
  await open(page, 'tab=models&edit=json');
  const text = page.locator('#json-editor');
  await text.fill('{"schema_version": 1, "kind": "model", "id": "p", "seq_len": 0, "hidden": 64, "heads": 128, "layers": "2", "mlp": "swiglo"}');
  const problems = page.locator('.json-problems li');
  await problems.first().waitFor();
  const all = (await problems.allTextContents()).join('\n');
  for (const want of ['seq_len seq_len = 0', 'layers layers = "2"', 'without quotes: 2', 'did you mean swiglu']) {
    assert.ok(all.includes(want), `want “${want}” in\n${all}`);
  }
  assert.ok(await page.locator('button[data-action="save"]').isDisabled());
  await text.fill('not json');
  assert.match(await page.locator('.json-problems').textContent(), /not valid JSON/);
  await text.fill(JSON.stringify({ l: 1024, e: 2048, h: 16, depth: 8 }));
  assert.match(await page.locator('.json-ok').textContent(), /reference-format model JSON/);
  // The form view shows the pasted model's fields.
  await page.getByRole('tab', { name: 'Form' }).click();
  assert.equal(await (await fieldError(page, 'hidden')).input.inputValue(), '2048');
  await page.locator('button[data-action="save"]').click();
  await page.locator('.mine-list .entry[data-id="my-model"]').waitFor();
  assert.deepEqual(page.errors, []);
});

// Issue 27 §2: a Hugging Face config.json is accepted wherever a model is, the catalog's editor too.
test('a pasted Hugging Face config.json reads as the model it describes and is saved', async () => {
  const page = await newPage(browser);
  await open(page, 'tab=models&edit=json');
  const text = page.locator('#json-editor');
  await text.fill(readFileSync(path.join(ROOT, 'examples/launch/hf-llama3-8b-config.json'), 'utf8'));
  assert.match(await page.locator('.json-ok').textContent(), /Hugging Face config\.json/);
  await page.getByRole('tab', { name: 'Form' }).click();
  assert.equal(await (await fieldError(page, 'hidden')).input.inputValue(), '4096');
  assert.equal(await (await fieldError(page, 'kv_heads')).input.inputValue(), '8');
  await page.locator('button[data-action="save"]').click();
  await page.locator('.mine-list .entry[data-id="my-hf-model"]').waitFor();
  assert.deepEqual(page.errors, []);
});

// The reference's systems/config-H200.json (spec §1.2).
const CONFIG_H200 = {
  matrix_flops_fp16: 989.4, vector_flops_fp16: 133.8, vector_flops_fp32: 66.9, hbm_bandwidth: 4800,
  hbm_capacity: 141, nvlink_bandwidth: 450, nvlink_eff: 0.7, nvlink_latency: 2.5e-6, ib_bandwidth: 50,
  ib_eff: 0.7, ib_latency: 5e-6, nvlink_size: 64, nic_factor: 1, empirical: false, summa_nb: 4,
  element_size: 2e-9, mask_element_size: 1e-9, flops_units: 1e-12,
};

function file(name, content) {
  return { name, mimeType: 'application/json', buffer: Buffer.from(typeof content === 'string' ? content : JSON.stringify(content)) };
}

test('importing files: every problem of a bad file, reference-format files appear, exports re-import', async () => {
  const page = await newPage(browser);
  await open(page, 'tab=models');
  const input = page.locator('input[data-testid="import-input"]');
  const bad = { schema_version: 1, kind: 'model', id: 'b', seq_len: -1, hidden: 'x', heads: 4, layers: 0, layerz: 3 };
  await input.setInputFiles([file('bad-model.json', bad), file('broken.json', '{"l": 12,')]);
  const badOutcome = page.locator('.outcome[data-file="bad-model.json"]');
  await badOutcome.waitFor();
  assert.match(await badOutcome.locator('.outcome-head').textContent(), /not imported: 4 problems/);
  const fields = await badOutcome.locator('.problems li').evaluateAll((lis) => lis.map((li) => li.dataset.field));
  assert.deepEqual(fields.sort(), ['hidden', 'layers', 'layerz', 'seq_len']);
  const text = await badOutcome.locator('.problems').textContent();
  assert.match(text, /negative counts are meaningless/);
  assert.match(text, /did you mean layers\?/);
  assert.match(text, /zero is not allowed here/);
  assert.match(await page.locator('.outcome[data-file="broken.json"]').textContent(), /not valid JSON/);
  assert.equal(await page.locator('.mine-list .entry').count(), 0, 'nothing of a bad file is added');

  // The reference's model and system JSON.
  await input.setInputFiles([
    file('my-shape.json', { l: 2048, e: 4096, h: 32, depth: 24 }),
    file('config-H200.json', CONFIG_H200),
  ]);
  await page.locator('.outcome[data-file="config-H200.json"].ok').waitFor();
  assert.match(await page.locator('.outcome[data-file="my-shape.json"]').textContent(), /reference-format model JSON.*added model my-shape/);
  await page.locator('.mine-list .entry[data-id="my-shape"]').waitFor();
  await page.locator('.outcome[data-file="config-H200.json"] a').click();
  const sys = page.locator('.mine-list .entry[data-id="config-H200"]');
  await sys.locator('.entry-body').waitFor();
  assert.match(await sys.locator('.entry-badges').textContent(), /exact reference parameters/);
  assert.match(await sys.locator('tr[data-param="matrix_flops_fp16"]').textContent(), /989\.4/);

  // Export a built-in entry, import the file back: a copy under a free id.
  await page.locator('.tabs a', { hasText: 'Models' }).click();
  const gpt = await expand(page, 'gpt3_1T');
  const [download] = await Promise.all([page.waitForEvent('download'), gpt.getByRole('button', { name: 'Export JSON', exact: true }).click()]);
  assert.equal(download.suggestedFilename(), 'gpt3_1T.json');
  const exported = readFileSync(await download.path(), 'utf8');
  const doc = JSON.parse(exported);
  assert.equal(doc.schema_version, 1);
  assert.equal(doc.kind, 'model');
  assert.equal(doc.hidden, 25600);
  await input.setInputFiles([file('gpt3_1T.json', exported)]);
  assert.match(await page.locator('.outcome[data-file="gpt3_1T.json"]').textContent(), /id gpt3_1T was taken: saved as gpt3_1T-2/);
  await page.locator('.mine-list .entry[data-id="gpt3_1T-2"]').waitFor();

  // Export everything, clear storage, import the file: all entries back.
  const [all] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export all your entries' }).click()]);
  const backup = readFileSync(await all.path(), 'utf8');
  assert.equal(JSON.parse(backup).format, 'fmperf.custom');
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await page.locator('.mine .empty-state').waitFor();
  await input.setInputFiles([file('fmperf-custom-entries.json', backup)]);
  await page.locator('.mine-list .entry[data-id="gpt3_1T-2"]').waitFor();
  assert.equal(await page.locator('.mine-list .entry').count(), 2);
  await page.locator('.tabs a', { hasText: 'Systems' }).click();
  await page.locator('.mine-list .entry[data-id="config-H200"]').waitFor();
  await screenshot(page, 'catalog-systems-mine');
  assert.deepEqual(page.errors, []);
});

test('stored entries that do not parse are kept and shown as needing attention', async () => {
  const page = await newPage(browser);
  const store = {
    format: 'fmperf.custom',
    schema_version: 1,
    models: [{ schema_version: 1, kind: 'model', id: 'hand-edited', seq_len: 2048, hidden: 64, heads: 128, layers: 2 }],
    systems: [],
    note_from_the_future: 42,
  };
  await page.addInitScript((s) => {
    if (!sessionStorage.getItem('seeded')) {
      localStorage.setItem('fmperf.custom.v1', s);
      sessionStorage.setItem('seeded', '1');
    }
  }, JSON.stringify(store));
  await open(page, 'tab=models');
  const att = page.locator('.entry.attention[data-id="hand-edited"]');
  await att.waitFor();
  assert.match(await att.textContent(), /needs attention/);
  assert.match(await att.locator('.problems').textContent(), /heads = 128: must not exceed hidden = 64/);
  await att.getByRole('button', { name: 'Fix in the JSON editor' }).click();
  const text = page.locator('#json-editor');
  const fixed = (await text.inputValue()).replace('"heads": 128', '"heads": 8');
  await text.fill(fixed);
  await page.locator('.json-ok').waitFor();
  await page.locator('button[data-action="save"]').click();
  await page.locator('.mine-list .entry[data-id="hand-edited"] .entry-body').waitFor();
  const saved = await page.evaluate(() => JSON.parse(localStorage.getItem('fmperf.custom.v1')));
  assert.equal(saved.models[0].heads, 8);
  assert.equal(saved.note_from_the_future, 42, 'unknown keys are kept');
  assert.deepEqual(page.errors, []);
});

test('unreadable storage is kept aside, and unavailable storage leaves the page working', async () => {
  let page = await newPage(browser);
  await page.addInitScript(() => {
    if (!sessionStorage.getItem('seeded')) {
      localStorage.setItem('fmperf.custom.v1', '{"format": "fmperf.custom", "models": [');
      sessionStorage.setItem('seeded', '1');
    }
  });
  await open(page, 'tab=models');
  assert.match(await page.locator('.storage-notice').textContent(), /could not be read.*fmperf\.custom\.v1\.unreadable/);
  assert.equal(await page.evaluate(() => localStorage.getItem('fmperf.custom.v1.unreadable')), '{"format": "fmperf.custom", "models": [');

  page = await newPage(browser);
  await page.addInitScript(() => {
    Object.defineProperty(window, 'localStorage', {
      get() {
        throw new DOMException('The operation is insecure.', 'SecurityError');
      },
    });
  });
  await open(page, 'tab=models');
  assert.match(await page.locator('.storage-notice').textContent(), /Browser storage is not available \(SecurityError/);
  await open(page, 'tab=models&edit=copy:vit_era5');
  await page.locator('.editor').waitFor();
  await page.locator('button[data-action="save"]').click();
  assert.match(await page.locator('.flash').textContent(), /for this page only/);
  await page.locator('.mine-list .entry[data-id="vit_era5-custom"]').waitFor();
  assert.deepEqual(page.errors, []);
});

test('narrow and dark screens: nothing wider than the screen', async () => {
  for (const scheme of ['light', 'dark']) {
    const page = await newPage(browser, { viewport: { width: 390, height: 844 } });
    await page.emulateMedia({ colorScheme: scheme });
    for (const [query, name] of [
      ['tab=models&entry=llama3-70b', 'model'],
      ['tab=systems&entry=amd_mi300x', 'system'],
      ['tab=systems&edit=copy:ref-B200', 'editor'],
    ]) {
      await open(page, query);
      await page.locator('.entry-body, .editor').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name} (${scheme}) overflows by ${overflow}px`);
      await screenshot(page, `catalog-390-${name}-${scheme}`);
    }
    const wide = await newPage(browser);
    await wide.emulateMedia({ colorScheme: scheme });
    await open(wide, 'tab=systems&entry=nvidia_gb200_nvl72');
    await wide.locator('.mapping-panel').waitFor();
    await screenshot(wide, `catalog-1280-system-${scheme}`);
    assert.deepEqual([...page.errors, ...wide.errors], []);
  }
});
