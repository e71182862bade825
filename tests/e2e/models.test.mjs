// The foundation slice: the page computes the reference models' parameter counts in the browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newPage, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

test('the three reference models and their parameter counts appear', async () => {
  const page = await newPage(browser);
  // On the About view (issue 29: it sat under every Explorer page).
  await page.goto(`${server.base}?view=about`);
  const table = page.locator('#reference-models');
  await table.waitFor({ timeout: 30_000 });
  const expected = { gpt3: '173.96', gpt3_1T: '1006.67', vit_era5: '86.98' };
  for (const [name, params] of Object.entries(expected)) {
    const cell = table.locator(`tr[data-model="${name}"] td.params`);
    assert.equal((await cell.textContent()).trim(), params, `parameters of ${name}`);
  }
  await screenshot(page, 'models');
  await page.goto(server.base);
  await page.locator('table.results tbody tr').first().waitFor({ timeout: 60_000 });
  assert.equal(await page.locator('#reference-models').count(), 0, 'the Explorer does not show the reference models');
  assert.deepEqual(page.errors, []);
});
