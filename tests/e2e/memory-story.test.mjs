// One story about memory (issue 29 §2): for one layout on one training stack, the Explorer's
// rows, the import of a launch file ("Your run") and the CLI say the same memory per device, the
// same band and the same verdict; a figure near the capacity says "may not fit" in words; the
// breakdown says which stack's semantics the figures assume, and the stack's switch changes them.
// The layout is the issue's: Llama 3 70B on 512 H100 (DP 64, TP 4, PP 2, micro-batch 1) as a
// Megatron-LM script, whose unsharded FP32 gradient buffer makes it "does not fit".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newPage, screenshot, ROOT, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

const SYSTEM = 'nvidia_h100_sxm5_80gb';
const SCRIPT = readFileSync(path.join(ROOT, 'examples/launch/megatron-llama3-70b-512.sh'), 'utf8');

/** `fmperf ARGS… --format json` (the binary in FMPERF_BIN, else cargo run). */
function cli(...args) {
  const options = { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, timeout: 600_000 };
  const all = [...args, '--format', 'json'];
  const out = process.env.FMPERF_BIN
    ? execFileSync(process.env.FMPERF_BIN, all, options)
    : execFileSync('cargo', ['run', '--release', '-q', '-p', 'fmperf-cli', '--', ...all], options);
  return JSON.parse(out);
}

/** Equal to 1e-9 relative: the page runs the same Rust in WebAssembly. */
function close(a, b, what) {
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: page ${a} vs CLI ${b}`);
}

function scriptFile(text) {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'fmperf-mem-')), 'run.sh');
  writeFileSync(file, text);
  return file;
}

/** Pastes a launch file into "Your run" on the H100 and returns the headline's exact memory. */
async function imported(page, text) {
  await page.goto(`${server.base}?tab=run`);
  const area = page.locator('textarea.launch-text');
  await area.waitFor({ timeout: 60_000 });
  await page.locator('input.launch-system').fill(SYSTEM);
  await area.fill(text);
  await page.locator('.launch-result').waitFor({ timeout: 60_000 });
  const dd = page.locator('[data-metric="memory_gb"]');
  return {
    gb: Number(await dd.locator('[data-value]').getAttribute('data-value')),
    text: (await dd.textContent()).replace(/\s+/g, ' ').trim(),
    fits: await page.locator('.launch-result').getAttribute('data-fits'),
  };
}

/** The first row's memory cell: exact figure, band and verdict, and its words. */
async function firstRow(page) {
  const cell = page.locator('table.results tbody tr:not([hidden])').first().locator('.mem-cell');
  await cell.waitFor({ timeout: 120_000 });
  return {
    gb: Number(await cell.getAttribute('data-memory-gb')),
    throughput: Number(await page.locator('table.results tbody tr:not([hidden])').first().getAttribute('data-throughput')),
    band: await cell.getAttribute('data-band-gb').then((b) => (b === null ? null : Number(b))),
    fits: await cell.getAttribute('data-fits'),
    title: await cell.getAttribute('title'),
    text: (await cell.textContent()).replace(/\s+/g, ' ').trim(),
  };
}

test("the issue's layout: the import, the CLI and the Explorer tell one memory story", async () => {
  const file = scriptFile(SCRIPT);
  const est = cli('estimate', '--from', file, '--system', SYSTEM);
  assert.equal(est.memory.fits, 'no', 'the unsharded FP32 gradient buffer does not fit');
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const imp = await imported(page, SCRIPT);
  close(imp.gb, est.memory.predicted_gb, 'imported memory');
  assert.equal(imp.fits, 'no');
  assert.match(imp.text, /^needs [\d.]+ ± [\d.]+ of 85\.5 GB: does not fit$/, imp.text);

  // "Search this scenario": the Explorer searches the file's model (its catalog twin), devices,
  // batch and switches; its first row says what `fmperf search` says on the URL's scenario (each
  // strategy searched, the fastest first), memory, band and verdict included.
  await page.locator('button.launch-search').click();
  await page.waitForFunction(() => new URL(location.href).searchParams.get('model') === 'llama3-70b');
  // The new search's rows, not those of the page's earlier scenario.
  await page.waitForFunction(() => !document.querySelector('.run-status') && !document.querySelector('.results-body.stale')
    && /512/.test(document.querySelector('.results-card p.summary')?.textContent ?? '')
    && document.querySelector('table.results tbody tr .mem-cell[data-fits]'), null, { timeout: 120_000 });
  const url = new URL(page.url()).searchParams;
  assert.equal(url.get('domain'), '', 'no domain pinned');
  const row = await firstRow(page);
  const tops = url.get('strategies').split(',').map((strategy) => cli('search', '--model', url.get('model'), '--system', url.get('system'),
    '--gpus', url.get('gpus'), '--global-batch', url.get('batch'), '--mode', 'extended', '--ext', url.get('ext') ?? '',
    '--strategy', strategy).results[0]);
  const top = tops.sort((a, b) => b.throughput_samples_per_s - a.throughput_samples_per_s)[0];
  close(row.throughput, top.throughput_samples_per_s, 'first row throughput');
  close(row.gb, top.mem_gb, 'first row memory');
  close(row.band, top.memory_band_gb, 'first row band');
  assert.equal(row.fits, top.fits, 'first row verdict');
  assert.notEqual(row.fits, 'no', 'the search never ranks first a layout that does not fit');
  const words = { yes: ': fits', tight: ' more than predicted: ', no: ': does not fit' }[row.fits];
  assert.ok(row.title.startsWith('needs ') && row.title.includes(words), row.title);
  assert.ok(row.text.includes('±'), `the row shows its band: ${row.text}`);
  if (row.fits === 'tight') assert.ok(row.text.includes('may not fit'), `said in words: ${row.text}`);

  // The breakdown says the same figure and which stack's semantics it assumes.
  await page.locator('#ex-tab-breakdown').click();
  const headline = page.locator('.selected .headline');
  await headline.waitFor({ timeout: 60_000 });
  const note = (await headline.locator('.mem-cell').getAttribute('title')) ?? '';
  assert.equal(note, row.title, 'the breakdown and the row say one sentence');
  const stack = page.locator('.stack-note');
  assert.equal(await stack.getAttribute('data-stack'), 'megatron');
  assert.match(await stack.textContent(), /Megatron-LM stack \(the default\).*unsharded FP32 main-gradient buffer/);

  // The Explorer's first layout, written as Megatron flags and imported: the same memory and time.
  const c = top.config;
  const exec = top.execution;
  assert.deepEqual([exec.recompute, exec.sharding], ['none', 'zero1'], 'the execution these flags say');
  const [tp, cp] = c.tp1 === undefined ? [c.tp, 1] : [c.tp1, c.tp2];
  const vpp = exec.interleave > 1 ? ` --num-layers-per-virtual-pipeline-stage ${80 / c.pp / exec.interleave}` : '';
  const again = SCRIPT.replace('--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2',
    `--tensor-model-parallel-size ${tp} --pipeline-model-parallel-size ${c.pp} --context-parallel-size ${cp}${vpp}`)
    .replace('--micro-batch-size 1', `--micro-batch-size ${c.mbs}`)
    // The catalog's vocabulary (the file's is padded to a multiple of 128 × TP).
    .replace('--vocab-size 128256', '--vocab-size 128256 --make-vocab-size-divisible-by 1');
  const back = await imported(page, again);
  const backCli = cli('estimate', '--from', scriptFile(again), '--system', SYSTEM);
  assert.deepEqual([backCli.config.dp, backCli.config.tp, backCli.config.cp, backCli.config.pp], [c.dp, tp, cp, c.pp], 'the flags name the row');
  close(back.gb, backCli.memory.predicted_gb, 'the row imported, page vs CLI');
  close(back.gb, row.gb, "the row imported vs the Explorer's row");
  assert.equal(back.fits, row.fits);
  await screenshot(page, 'memory-story-import');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the stack switch changes the memory and the URL, and a reload keeps it', async () => {
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  const q = `?mode=extended&model=llama3-70b&system=${SYSTEM}&gpus=512&batch=1024`;
  await page.goto(server.base + q);
  await firstRow(page);
  await page.locator('.stack-note').waitFor({ timeout: 60_000 });
  // The note's link opens the switches and focuses the stack's picker.
  await page.locator('.stack-note a.to-stack').click();
  await page.waitForFunction(() => document.activeElement?.id === 'switch-stack');
  await page.locator('#switch-stack').selectOption('deepspeed');
  await page.waitForFunction(() => (new URL(location.href).searchParams.get('ext') ?? '').includes('stack=deepspeed'));
  await page.waitForFunction(() => document.querySelector('.stack-note')?.dataset.stack === 'deepspeed', null, { timeout: 120_000 });
  const ds = await firstRow(page);
  const cliDs = cli('search', '--model', 'llama3-70b', '--system', SYSTEM, '--gpus', '512', '--global-batch', '1024', '--mode', 'extended', '--ext', 'stack=deepspeed');
  close(ds.gb, cliDs.results[0].mem_gb, 'DeepSpeed first row memory');
  assert.equal(ds.fits, cliDs.results[0].fits);
  assert.match(await page.locator('.stack-note').textContent(), /DeepSpeed stack: ZeRO-1 keeps whole gradients/);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('.stack-note')?.dataset.stack === 'deepspeed', null, { timeout: 120_000 });
  assert.equal(await page.locator('#switch-stack').inputValue(), 'deepspeed');
  assert.equal((await firstRow(page)).gb, ds.gb);
  // Reference mode has no band: its memory is the published model's.
  await page.goto(`${server.base}?mode=reference&model=llama3-70b&system=${SYSTEM}&gpus=512&batch=1024`);
  const ref = await firstRow(page);
  assert.ok(ref.band === null && ref.fits === null, JSON.stringify(ref));
  assert.equal(await page.locator('.stack-note').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** The Explorer's memory chart: its title lines, capacity line, bars (label, right end, mark, end
 * label) and legend, read from the SVG. */
async function memoryChart(page) {
  return page.evaluate(() => {
    // A bar's label: its lines, 1.15 em apart (neighbouring labels are at least 1.3 em apart).
    const barLabels = (svg) => {
      const lines = [...svg.querySelectorAll('.fc-tick')].filter((t) => t.getAttribute('text-anchor') === 'end')
        .map((t) => ({ y: Number(t.getAttribute('y')), text: t.textContent }));
      const out = [];
      lines.forEach((l, k) => (k > 0 && l.y - lines[k - 1].y < 1.2 * 11.5 ? out[out.length - 1] += ` ${l.text}` : out.push(l.text)));
      return out;
    };
    const svg = [...document.querySelectorAll('.panel-breakdown svg.fc')]
      .find((s) => s.querySelector('title')?.textContent.startsWith('Memory per device by component'));
    if (!svg) return null;
    const num = (e, a) => Number(e.getAttribute(a));
    const line = svg.querySelector('path.fc-limit');
    const label = svg.querySelector('text.fc-limit-label');
    const bars = barLabels(svg);
    // Segments grouped by band (their y), top to bottom.
    const bands = new Map();
    for (const r of svg.querySelectorAll('rect.fc-bar')) {
      const y = num(r, 'y');
      bands.set(y, Math.max(bands.get(y) ?? 0, num(r, 'x') + num(r, 'width')));
    }
    const ends = [...bands.entries()].sort((a, b) => a[0] - b[0]).map(([, right]) => right);
    return {
      title: svg.querySelector('title').textContent,
      titleLines: [...svg.querySelectorAll('.fc-title tspan')].map((t) => t.textContent),
      width: num(svg, 'width'),
      line: line && { value: num(label, 'data-limit'), x1: line.getBBox().x, x2: line.getBBox().x + line.getBBox().width },
      label: label && { text: label.textContent, x: num(label, 'x'), width: label.getComputedTextLength() },
      labels: bars,
      ends,
      flags: [...svg.querySelectorAll('path.fc-flag[data-bar]')].map((r) => ({ bar: num(r, 'data-bar'), fits: r.getAttribute('data-fits') })),
      totals: [...svg.querySelectorAll('.fc-totals text')].map((t) => ({ text: t.textContent, fits: t.getAttribute('data-fits') })),
      ranges: svg.querySelectorAll('.fc-limits path.fc-range').length,
      legend: [...svg.querySelectorAll('.fc-legend')].map((t) => t.textContent),
      desc: svg.querySelector('desc').textContent,
    };
  });
}

test('the memory chart draws the capacity, each bar\'s band and a mark on the bars that may not fit', async () => {
  const q = `?mode=extended&model=llama3-70b&system=${SYSTEM}&gpus=512&batch=1024&tab=breakdown`;
  for (const width of [1280, 390]) {
    const page = await newPage(browser, { viewport: { width, height: 900 } });
    await page.goto(server.base + q);
    await firstRow(page);
    await page.waitForFunction(() => document.querySelector('.panel-breakdown path.fc-limit'), null, { timeout: 60_000 });
    const chart = await memoryChart(page);
    // The title keeps each figure with its unit (no-break spaces), at a phone's width too.
    assert.match(chart.title, /\(capacity 85\.5\u00a0GB\), each figure ±\u00a0[\d.]+\u00a0%$/, chart.title);
    assert.ok(chart.titleLines.every((l) => !/^(%|GB)/.test(l) && !/[±\d]$/.test(l)), JSON.stringify(chart.titleLines));
    // The capacity line: at 85.5 GB, labelled, right of every bar under it, inside the chart.
    assert.equal(chart.line.value.toFixed(1), '85.5', 'the capacity the verdicts judge against');
    assert.equal(chart.line.x1, chart.line.x2, 'a vertical line');
    assert.equal(chart.label.text, 'capacity 85.5 GB');
    assert.ok(chart.label.x >= 0 && chart.label.x + chart.label.width <= chart.width, JSON.stringify(chart.label));
    // One bar per visible row, numbered as the table numbers it; the verdict is in the mark, not in
    // the (truncated) label.
    const rows = await page.locator('table.results tbody tr:not([hidden])').evaluateAll((trs) => trs.map((tr) => ({
      rank: tr.querySelector('td').textContent.trim(),
      fits: tr.querySelector('.mem-cell').getAttribute('data-fits'),
      gb: Number(tr.querySelector('.mem-cell').getAttribute('data-memory-gb')),
    })));
    assert.equal(chart.ends.length, chart.labels.length);
    // Every bar says which layout it is, in full (on two lines where one is too narrow).
    assert.ok(chart.labels.every((l) => !l.includes('…') && /^#\d+ \S+ dp\d+ tp\S+ pp\d+ mbs\d+$/.test(l)), JSON.stringify(chart.labels));
    assert.ok(chart.labels.every((l) => !l.includes('fit') && !l.includes('·')), JSON.stringify(chart.labels));
    assert.equal(chart.ranges, chart.labels.length, 'every bar has its band');
    for (let i = 0; i < chart.labels.length; i++) {
      const rank = chart.labels[i].match(/^#(\d+) /)[1];
      const row = rows.find((r) => r.rank === rank);
      assert.ok(row, `bar #${rank} has a row`);
      if (row.gb < chart.line.value) assert.ok(chart.ends[i] < chart.line.x1, `bar #${rank} (${row.gb} GB) ends left of the capacity`);
      const flag = chart.flags.find((f) => f.bar === i);
      const total = chart.totals[i];
      assert.equal(total.fits, row.fits, `bar #${rank}'s end label says the row's verdict`);
      if (row.fits === 'yes') {
        assert.equal(flag, undefined, `bar #${rank} fits: no mark`);
        assert.match(total.text, /^[\d.]+$/);
      } else {
        assert.equal(flag?.fits, row.fits, `bar #${rank} (${row.fits}) is marked`);
        assert.match(total.text, row.fits === 'tight' ? /^[\d.]+ !$/ : /^[\d.]+ ×$/);
      }
    }
    assert.ok(rows.some((r) => r.fits === 'tight'), 'the scenario has rows that may not fit');
    // The legend says what the marks mean; the description keeps the rows' sentences.
    assert.ok(chart.legend.includes('! may not fit'), JSON.stringify(chart.legend));
    assert.ok(chart.legend.some((l) => /^band −[\d.]+ % to \+[\d.]+ %$/.test(l)), JSON.stringify(chart.legend));
    assert.match(chart.desc, /needs [\d.]+ ± [\d.]+ of 85\.5 GB: may not fit/);
    assert.match(chart.desc, /A line marks the capacity 85\.5 GB\.$/);
    // The tooltip of the first bar ends with its row's sentence.
    const svg = page.locator('.panel-breakdown svg.fc').filter({ has: page.locator('title', { hasText: 'Memory per device' }) });
    await svg.focus();
    await page.keyboard.press('ArrowRight');
    const tip = (await svg.locator('.fc-tip text').textContent()).replace(/\s+/g, ' ');
    assert.match(tip, /needs [\d.]+ ± [\d.]+ of 85\.5 GB: (fits|may not fit|does not fit)/, tip);
    await screenshot(page, `memory-chart-${width}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  }
  // Reference mode: the capacity line only (no band, no verdict).
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(`${server.base}?mode=reference&model=llama3-70b&system=${SYSTEM}&gpus=512&batch=1024&tab=breakdown`);
  await page.locator('table.results tbody tr .mem-cell').first().waitFor({ timeout: 120_000 });
  await page.waitForFunction(() => document.querySelector('.panel-breakdown path.fc-limit'), null, { timeout: 60_000 });
  const ref = await memoryChart(page);
  assert.ok(ref.line.value > 0 && ref.label.text.startsWith('capacity '), JSON.stringify(ref.line));
  // Here the axis ends at the capacity: the line is the plot's right edge, its label still inside.
  assert.ok(ref.label.x >= 0 && ref.label.x + ref.label.width <= ref.width, JSON.stringify(ref.label));
  assert.deepEqual([ref.flags.length, ref.ranges], [0, 0]);
  assert.ok(ref.totals.every((t) => t.fits === null && /^[\d.]+$/.test(t.text)), JSON.stringify(ref.totals));
  assert.ok(!ref.legend.some((l) => /fit|band/.test(l)), JSON.stringify(ref.legend));
  assert.ok(!ref.title.includes('±'), ref.title);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('Compare says each column\'s band and verdict, and its memory chart draws one capacity with the marks', async () => {
  const q = `?mode=extended&model=llama3-70b&system=${SYSTEM}&gpus=512&batch=1024`;
  const page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(server.base + q);
  await firstRow(page);
  const rows = page.locator('table.results tbody tr:not([hidden])');
  const verdicts = await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector('.mem-cell').getAttribute('data-fits')));
  // Two rows, one that may not fit among them where the list has one.
  const picks = [0, Math.max(1, verdicts.indexOf('tight'))];
  for (const i of picks) await rows.nth(i).locator('input.pin').check();
  await page.locator('#ex-tab-compare').click();
  await page.locator('table.compare thead th[data-pin]').nth(1).waitFor({ timeout: 60_000 });
  const cells = await page.locator('table.compare tr', { hasText: 'memory per device [GB]' }).locator('td').allTextContents();
  assert.equal(cells.length, 2);
  const words = { yes: 'fits', tight: 'may not fit', no: 'does not fit' };
  picks.forEach((row, i) => {
    assert.match(cells[i], /^[\d.]+ ± [\d.]+ \/ 85\.5: /, cells[i]);
    assert.ok(cells[i].endsWith(`: ${words[verdicts[row]]}`), `${cells[i]} says the row's verdict (${verdicts[row]})`);
  });
  // Both columns on one part: the chart draws its capacity, a band per bar, a mark on a bar that may not fit.
  await page.waitForFunction(() => document.querySelector('.panel-compare svg.fc path.fc-limit'), null, { timeout: 30_000 });
  const chart = await page.locator('.panel-compare svg.fc').filter({ has: page.locator('title', { hasText: 'memory' }) }).evaluate((svg) => ({
    label: svg.querySelector('text.fc-limit-label')?.textContent,
    ranges: svg.querySelectorAll('.fc-limits path.fc-range').length,
    flags: [...svg.querySelectorAll('path.fc-flag[data-bar]')].map((p) => p.getAttribute('data-fits')),
  }));
  assert.equal(chart.label, 'capacity 85.5 GB');
  assert.equal(chart.ranges, 2);
  assert.deepEqual(chart.flags, picks.map((r) => verdicts[r]).filter((v) => v !== 'yes'));
  await screenshot(page, 'compare-memory-1280');
  assert.deepEqual(page.errors, []);
  await page.close();
});

// Issue 29: a layout that does not fit. The list never shows one (the search keeps the layouts
// that fit), so it is pinned in Compare beside the search's best: Llama 3 70B on 64 H100 as DP 64
// with micro-batches of 16 sequences (about 470 GB of activations on each 85.5 GB part).
test('a pinned layout that does not fit: "does not fit" in its cell, a solid red outline and "×" on its bar', async () => {
  const best = cli('search', '--model', 'llama3-70b', '--system', SYSTEM, '--gpus', '512', '--global-batch', '1024', '--mode', 'extended', '--top', '1').results[0];
  const over = `llama3-70b~${SYSTEM}~8~1024~1d.dp64.tp1.pp1.mbs16.nv1x1x1`;
  const fit = `llama3-70b~${SYSTEM}~8~1024~${best.code}`;
  for (const [width, scheme] of [[1280, 'light'], [390, 'dark']]) {
    const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
    await page.goto(`${server.base}?mode=extended&model=llama3-70b&system=${SYSTEM}&gpus=512&batch=1024&tab=compare&cmp=${fit},${over}`);
    await page.locator('table.compare thead th[data-pin]').nth(1).waitFor({ timeout: 120_000 });
    // Columns are ordered by rank: find the pinned layout's column (pin B) and its bar.
    const row = async (label) => (await page.locator('table.compare tr').filter({ has: page.locator('th', { hasText: new RegExp(`^${label}$`) }) })
      .locator('td').allTextContents()).map((t) => t.trim());
    const configs = await row('configuration');
    const col = configs.indexOf(over.split('~').pop());
    assert.ok(col >= 0, JSON.stringify(configs));
    const cells = await row('memory per device \\[GB\\]');
    assert.equal(cells.length, 2, JSON.stringify(cells));
    assert.match(cells[col], /^[\d.]+ ± [\d.]+ \/ 85\.5: does not fit$/, cells[col]);
    assert.ok(!cells[1 - col].endsWith('does not fit'), cells[1 - col]);
    await page.waitForFunction(() => document.querySelector('.panel-compare svg.fc path.fc-limit'), null, { timeout: 30_000 });
    const chart = await page.locator('.panel-compare svg.fc').filter({ has: page.locator('title', { hasText: 'memory' }) }).evaluate((svg) => {
      // The bars in the chart's order, by their labels (`B · …` is the pinned layout).
      // A bar's label: its lines, 1.15 em apart (labels are at least 1.3 em apart).
      const lines = [...svg.querySelectorAll('.fc-tick')].filter((t) => t.getAttribute('text-anchor') === 'end')
        .map((t) => ({ y: Number(t.getAttribute('y')), text: t.textContent }));
      const labels = [];
      lines.forEach((l, k) => (k > 0 && l.y - lines[k - 1].y < 1.2 * 11.5 ? labels[labels.length - 1] += ` ${l.text}` : labels.push(l.text)));
      const i = labels.findIndex((l) => l.startsWith('B ·'));
      const flag = svg.querySelector(`path.fc-flag[data-bar="${i}"]`);
      const total = [...svg.querySelectorAll('.fc-totals text')][i];
      const glyph = total?.querySelector('tspan');
      const style = flag && getComputedStyle(flag);
      return {
        fits: flag?.getAttribute('data-fits'),
        stroke: style?.stroke,
        dash: style?.strokeDasharray,
        total: total?.textContent,
        totalFits: total?.getAttribute('data-fits'),
        glyphFill: glyph && getComputedStyle(glyph).fill,
        otherFlag: svg.querySelector(`path.fc-flag[data-bar="${1 - i}"]`)?.getAttribute('data-fits') ?? null,
        legend: [...svg.querySelectorAll('.fc-legend')].map((t) => t.textContent),
        labels,
      };
    });
    // Each bar names its layout in full: its letter and the layout's words (one system: no name).
    assert.deepEqual(chart.labels.map((l) => l.slice(0, 3)).sort(), ['A ·', 'B ·'], JSON.stringify(chart.labels));
    assert.ok(chart.labels.some((l) => l === 'B · 1d dp64 tp1 pp1 mbs16'), JSON.stringify(chart.labels));
    const red = (c) => {
      const [r, g, b] = c.match(/\d+/g).map(Number);
      return r > g + 60 && r > b + 60;
    };
    assert.equal(chart.fits, 'no', JSON.stringify(chart));
    assert.ok(red(chart.stroke), `the outline is red: ${chart.stroke} (${scheme})`);
    assert.equal(chart.dash, 'none', 'a solid outline (may-not-fit is dashed)');
    // The bar's total is the cell's figure, in the same precision, followed by "×" in red.
    assert.equal(chart.totalFits, 'no');
    assert.equal(chart.total, `${cells[col].match(/^([\d.]+) /)[1]} ×`);
    assert.ok(red(chart.glyphFill), `the × is red: ${chart.glyphFill}`);
    assert.ok(chart.legend.includes('× does not fit'), JSON.stringify(chart.legend));
    assert.notEqual(chart.otherFlag, 'no', 'the best layout is not marked as not fitting');
    await screenshot(page, `compare-does-not-fit-${width}-${scheme}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});
