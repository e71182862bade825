// Accessibility and a look at every view: axe-core (injected into the page) reports no violation
// of any impact on any view, at 1280 and 390 px, in light and dark; and a full-page
// screenshot of each is saved in tests/artifacts/ (a11y-<view>-<width>-<scheme>.png) for a person
// to look at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, newPage, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** An MoE scenario in extended mode (Mixtral 8x7B on 128 H100). */
const MOE = 'mode=extended&model=mixtral-8x7b&system=nvidia_h100_sxm5_80gb&gpus=128&batch=512&strategies=1d,2d-seqp&top=10';

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
