// The single-file bundle (dist/fmperf.html) works when opened from disk, with no network at all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, launch, newPage, screenshot } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('fmperf.html opened from file:// computes the models table offline', async () => {
  const page = await newPage(browser);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const url = `${pathToFileURL(path.join(DIST, 'fmperf.html')).href}?view=about`;
  await page.goto(url);
  const cell = page.locator('#reference-models tr[data-model="gpt3_1T"] td.params');
  await cell.waitFor({ timeout: 30_000 });
  assert.equal((await cell.textContent()).trim(), '1006.67');
  // The file is windows-1252 (the WebAssembly is stored as raw bytes); its text was written as
  // ASCII entities and escapes, so the page reads as the served one does.
  assert.equal(await page.evaluate(() => document.characterSet), 'windows-1252');
  assert.equal(await page.title(), 'fmperf \u2014 foundation-model training performance');
  const external = requests.filter((u) => !u.startsWith('file://') && !u.startsWith('data:'));
  assert.deepEqual(external, [], 'no request leaves the file');
  await screenshot(page, 'offline-single-file');
  assert.deepEqual(page.errors, []);
});
