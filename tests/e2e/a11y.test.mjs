// Accessibility and a look at every view: axe-core (injected into the page) reports no serious or
// critical violation on any view, at 1280 and 390 px, in light and dark; and a full-page
// screenshot of each is saved in tests/artifacts/ (a11y-<view>-<width>-<scheme>.png) for a person
// to look at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { newPage, screenshot, sharedBrowser } from './harness.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Each view with what shows it is ready (the explorer and studies wait for their results). */
const VIEWS = [
  ['explorer', '?view=explorer', 'table.results tbody tr'],
  ['explorer-layers', '?view=explorer&tab=layers', '.panel-layers'],
  ['explorer-compare', '?view=explorer&mode=reference&tab=compare&cmp=gpt3_1T~ref-H200~8~4096~1d.dp16.tp8.pp32.mbs1.nv8x1x1', 'table.compare'],
  ['studies', '?view=studies', '#sweep-summary'],
  ['studies-preset', '?view=studies&preset=strong-scaling&panel=gpt3_1T', '#sweep-summary'],
  ['catalog', '?view=catalog', '.catalog-head .tabs'],
  ['validation', '?view=validation', 'main h1'],
  ['about', '?view=about', 'main h1'],
];

/** axe-core's serious and critical violations on the page, one line each. */
async function violations(page) {
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
  });
  return result;
}

for (const [name, query, ready] of VIEWS) {
  test(`${name}: no serious or critical accessibility violation, 1280 and 390 px, light and dark`, async () => {
    const found = [];
    for (const width of [1280, 390]) {
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
        await page.goto(server.base + query);
        await page.locator(ready).first().waitFor({ timeout: 120_000 });
        await page.waitForFunction(() => !document.querySelector('.run-status:not(.quiet)'), null, { timeout: 120_000 });
        await screenshot(page, `a11y-${name}-${width}-${scheme}`);
        for (const v of await violations(page)) found.push(`${width}px ${scheme}: ${v}`);
        assert.deepEqual(page.errors, []);
        await page.close();
      }
    }
    assert.deepEqual(found, []);
  });
}
