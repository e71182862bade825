// Accessibility and a look at every view: axe-core (injected into the page) reports no violation
// of any impact on any view, at 1280 and 390 px, in light and dark; and a full-page
// screenshot of each is saved in tests/artifacts/ (a11y-<view>-<width>-<scheme>.png) for a person
// to look at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { axeViolations, DIST, newPage, ROOT, screenshot, sharedBrowser, SMALL_SCENARIO, staticServer } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** An MoE scenario in extended mode (Mixtral 8x7B on 128 H100). */
const MOE = 'mode=extended&model=mixtral-8x7b&system=nvidia_h100_sxm5_80gb&gpus=128&batch=512&strategies=1d,2d-seqp&top=10';

/** The dense scenario (Llama 3 70B on 512 H100, extended): rows that may not fit. */
const BIG = 'mode=extended&model=llama3-70b&system=nvidia_h100_sxm5_80gb&gpus=512&batch=1024';
/** A pinned layout of it that does not fit (70B unsharded on each part). */
const OVER = 'llama3-70b~nvidia_h100_sxm5_80gb~8~1024~1d.dp64.tp1.pp1.mbs16.nv1x1x1';

/** Each view with what shows it is ready (the explorer and studies wait for their results) and,
 *  for some, what a user does first. */
const VIEWS = [
  ['explorer', '?view=explorer', 'table.results tbody tr'],
  ['explorer-layers', '?view=explorer&tab=layers', '.panel-layers'],
  ['explorer-compare', '?view=explorer&mode=reference&tab=compare&cmp=gpt3_1T~ref-H200~8~4096~1d.dp16.tp8.pp32.mbs1.nv8x1x1', 'table.compare'],
  ['studies', '?view=studies', '#sweep-summary'],
  ['studies-preset', '?view=studies&preset=strong-scaling&panel=gpt3_1T', '#sweep-summary'],
  ['explorer-moe', `?view=explorer&${MOE}`, 'table.results tbody tr'],
  ['explorer-moe-layers', `?view=explorer&${MOE}&tab=layers`, 'table.moe-time'],
  ['explorer-moe-reference', `?view=explorer&${MOE.replace('mode=extended', 'mode=reference')}`, '.moe-reference'],
  ['catalog', '?view=catalog', '.catalog-head .tabs'],
  // A duplicate after the user changed a figure: the notes it drops are listed.
  ['catalog-duplicate', '?view=catalog&tab=systems&edit=copy:nvidia_h100_sxm_96gb_hbm2e_500w', '.editor',
    async (page) => {
      await page.locator('.field[data-path="peak_tflops.bf16"] input').fill('912.5');
      await page.locator('.inherited-notes').waitFor();
    }],
  ['validation', '?view=validation', 'main h1'],
  ['about', '?view=about', 'main h1'],
  // Issue 29 "every view": the Explorer's other tabs, the catalog's lists, detail, JSON view and
  // import, a custom Studies sweep and its heat map.
  ['explorer-own', `${SMALL_SCENARIO}&tab=own`, '.panel-own .own-result'],
  ['explorer-run', `${SMALL_SCENARIO}&tab=run`, 'textarea.launch-text',
    async (page) => {
      await page.locator('textarea.launch-text').fill(readFileSync(path.join(ROOT, 'examples/launch/megatron-llama3-70b.sh'), 'utf8'));
      await page.locator('.launch-result').waitFor({ timeout: 30_000 });
    }],
  ['catalog-systems', '?view=catalog&tab=systems', '.catalog-head .tabs'],
  ['catalog-entry', '?view=catalog&tab=systems&entry=nvidia_h100_sxm5_80gb', '.entry.open .entry-body'],
  ['catalog-json', '?view=catalog&tab=systems&edit=copy:nvidia_h100_sxm5_80gb', '.editor',
    async (page) => {
      await page.getByRole('tab', { name: 'JSON' }).click();
      await page.locator('#json-editor').waitFor();
    }],
  ['catalog-import', '?view=catalog&tab=models', 'input[data-testid="import-input"]',
    async (page) => {
      const bad = { schema_version: 1, kind: 'model', id: 'b', seq_len: -1, hidden: 'x', heads: 4, layers: 0, layerz: 3 };
      await page.locator('input[data-testid="import-input"]').setInputFiles([
        { name: 'bad-model.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(bad)) },
        { name: 'model.json', mimeType: 'application/json', buffer: readFileSync(path.join(ROOT, 'examples/launch/hf-llama3-8b-config.json')) },
      ]);
      await page.locator('.outcome[data-file="bad-model.json"]').waitFor();
    }],
  // Issue 29 "every view": the list's charts with the memory marks and the breakdown (the
  // finished sensitivity strip is sensitivity.test.mjs's); Compare in extended mode with a layout that does not
  // fit; the Explorer's "Measured" tab.
  ['explorer-memory-marks', `?view=explorer&${BIG}&tab=breakdown`, '.panel-breakdown text.fc-limit-label'],
  ['explorer-compare-extended', `?view=explorer&${BIG}&tab=compare&cmp=${OVER}`, 'table.results tbody tr',
    async (page) => {
      await page.locator('table.results tbody tr').first().locator('input.pin').check();
      await page.locator('table.compare thead th[data-pin]').nth(1).waitFor({ timeout: 120_000 });
      await page.locator('.panel-compare svg.fc path.fc-flag-over[data-bar]').first().waitFor({ timeout: 30_000 });
    }],
  ['explorer-measured', `${SMALL_SCENARIO}&tab=measured`, '.calibrate'],
  ['studies-custom-heatmap', '?view=studies&mode=extended&s.model=llama3-8b&s.system=nvidia_h100_sxm5_80gb&s.global-batch=512&ax.gpus=64,128,256&ax.hbm_bandwidth=x0.5,x1,x2&c.kind=heatmap&c.x=gpus&c.y=hbm_bandwidth',
    '#sweep-chart[data-kind="heatmap"] svg'],
];

for (const [name, query, ready, act] of VIEWS) {
  test(`${name}: no accessibility violation of any impact, 1280 and 390 px, light and dark`, async () => {
    const found = [];
    for (const width of [1280, 390]) {
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
        await page.goto(server.base + query);
        await page.locator(ready).first().waitFor({ timeout: 120_000 });
        await page.waitForFunction(() => !document.querySelector('.run-status:not(.quiet)'), null, { timeout: 120_000 });
        if (act) await act(page);
        await screenshot(page, `a11y-${name}-${width}-${scheme}`);
        for (const v of await axeViolations(page)) found.push(`${width}px ${scheme}: ${v}`);
        assert.deepEqual(page.errors, []);
        await page.close();
      }
    }
    assert.deepEqual(found, []);
  });
}

// The first view (drawn before the page's module loads, in a closed shadow root): opened here so
// that axe sees inside it, with the page's module held back so that the first view stays.
test('first view: no accessibility violation of any impact, 1280 and 390 px, light and dark', async () => {
  const found = [];
  for (const width of [1280, 390]) {
    for (const scheme of ['light', 'dark']) {
      const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
      await page.addInitScript(() => {
        const attach = Element.prototype.attachShadow;
        Element.prototype.attachShadow = function (init) {
          return attach.call(this, this.id === 'first-view' ? { ...init, mode: 'open' } : init);
        };
      });
      let release;
      const held = new Promise((r) => (release = r));
      await page.route(/fmperf-web-[0-9a-f]+_bg\.wasm$/, async (route) => {
        await held;
        await route.continue().catch(() => {});
      });
      await page.goto(server.base);
      await page.waitForFunction(() => document.getElementById('first-view')?.shadowRoot?.querySelector('table.results tbody tr'), null, { timeout: 30_000 });
      await screenshot(page, `a11y-first-view-${width}-${scheme}`);
      for (const v of await axeViolations(page)) found.push(`${width}px ${scheme}: ${v}`);
      release();
      await page.close();
    }
  }
  assert.deepEqual(found, []);
});

// The embed page (dist/embed.html): an iframe and two custom elements, each with the app.
test('embed page: no accessibility violation of any impact, 1280 and 390 px, light and dark', async () => {
  const srv = await staticServer(DIST);
  const found = [];
  try {
    for (const width of [1280, 390]) {
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
        await page.goto(srv.base + 'embed.html');
        await page.frameLocator('#demo-iframe').locator('.app main').first().waitFor({ timeout: 30_000 });
        for (const id of ['#demo-element-1', '#demo-element-2']) await page.locator(id).locator('.app #main-content').first().waitFor({ timeout: 30_000 });
        await page.waitForFunction(() => !document.querySelector('#demo-element-1')?.shadowRoot?.querySelector('.run-status:not(.quiet)'), null, { timeout: 120_000 });
        await screenshot(page, `a11y-embed-${width}-${scheme}`);
        // The host document, then each element's app on its own: two copies of one app on a page
        // repeat its landmarks ("Scenario" twice), which no label inside one copy can avoid.
        await page.addScriptTag({ path: path.join(ROOT, 'tests/node_modules/axe-core/axe.min.js') });
        for (const [what, context] of [
          ['page', { exclude: [['#demo-element-1'], ['#demo-element-2']] }],
          ['element 1', { include: [['#demo-element-1']] }],
          ['element 2', { include: [['#demo-element-2']] }],
        ]) {
          const v = await page.evaluate(async (c) => (await axe.run(c, { resultTypes: ['violations'] })).violations
            .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`), context);
          for (const x of v) found.push(`${width}px ${scheme} ${what}: ${x}`);
        }
        // The app inside the iframe, checked on its own.
        const frame = page.frames().find((f) => f !== page.mainFrame());
        await frame.addScriptTag({ path: path.join(ROOT, 'tests/node_modules/axe-core/axe.min.js') });
        const inner = await frame.evaluate(async () => (await axe.run(document, { resultTypes: ['violations'] })).violations
          .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
        for (const v of inner) found.push(`${width}px ${scheme} iframe: ${v}`);
        assert.deepEqual(page.errors, []);
        await page.close();
      }
    }
  } finally {
    srv.stop();
  }
  assert.deepEqual(found, []);
});
