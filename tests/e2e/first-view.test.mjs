// The explorer's first view (crates/first-view): shown by the boot script before the page's own
// module has loaded (drawn at build time for the default page, by its own small module for any
// other explorer URL), it shows the page's rows (same configurations, same numbers, same order)
// and gives way to the page; it draws nothing where the page must speak (other views, bad input),
// and the page works without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { DIST, ROOT, newPage, screenshot, sharedBrowser } from './harness.mjs';

let server, browser;
sharedBrowser((s, b) => {
  server = s;
  browser = b;
});

/** Records the first view's (closed) shadow root as `window.__firstView`, and whether a
 *  `#first-view` element was ever in the document (`window.__firstViewSeen`). */
async function watchFirstView(page) {
  await page.addInitScript(() => {
    const attach = Element.prototype.attachShadow;
    Element.prototype.attachShadow = function (init) {
      const root = attach.call(this, init);
      if (this.id === 'first-view') window.__firstView = root;
      return root;
    };
    new MutationObserver(() => {
      if (document.getElementById('first-view')) window.__firstViewSeen = true;
    }).observe(document, { childList: true, subtree: true });
  });
}

/** Rows of a results table under `root` (a document or a shadow root): config and throughput text. */
function rowsIn(root) {
  return [...root.querySelectorAll('table.results tbody tr:not([hidden])')].map((tr) => ({
    config: tr.dataset.config,
    throughput: tr.querySelector('td.throughput').textContent.trim(),
  }));
}

/** Holds the page's own module until `release()` is called, so that the first view stays. */
async function holdPage(page) {
  let release;
  const held = new Promise((r) => (release = r));
  await page.route(/fmperf-web-[0-9a-f]+_bg\.wasm$/, async (route) => {
    await held;
    await route.continue();
  });
  return release;
}

async function firstViewRows(page) {
  await page.waitForFunction(() => document.getElementById('first-view')?.dataset.rows !== undefined, null, {
    timeout: 30_000,
  });
  return page.evaluate(`(${rowsIn})(window.__firstView)`);
}

async function pageRows(page) {
  await page.locator('table.results tbody tr').first().waitFor({ state: 'visible', timeout: 60_000 });
  return page.evaluate(`(${rowsIn})(document)`);
}

for (const [name, query] of [
  ['the default scenario', ''],
  ['the explorer named', '?view=explorer'],
  ['a permalink with a list and a mode', '?mode=reference&list=1d'],
]) {
  test(`first view of ${name}: the page's rows, then the page`, async () => {
    const page = await newPage(browser);
    await watchFirstView(page);
    const release = await holdPage(page);
    const modules = [];
    page.on('request', (r) => /first-view-[0-9a-f]+_bg\.wasm$/.test(r.url()) && modules.push(r.url()));
    await page.goto(server.base + query);
    const first = await firstViewRows(page);
    // The default page's was drawn at build time: no module computes it.
    const ahead = query === '' || query === '?view=explorer';
    assert.equal(modules.length, ahead ? 0 : 1, `first view modules loaded: ${modules}`);
    const summary = await page.evaluate(() => window.__firstView.querySelector('.summary').textContent);
    assert.equal(/candidates in \d+ ms/.test(summary), !ahead, summary);
    assert.ok(first.length > 0, 'the first view has rows');
    assert.equal(await page.locator('#first-view').getAttribute('data-rows'), String(first.length));
    if (query === '') {
      for (const [width, scheme] of [[1280, 'light'], [1280, 'dark'], [390, 'light'], [390, 'dark']]) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme: scheme });
        await screenshot(page, `first-view-${width}-${scheme}`);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    const top = () => (window.__firstView && document.getElementById('first-view') ? window.__firstView : document)
      .querySelector('.results-card').getBoundingClientRect().top;
    const before = await page.evaluate(top);
    release();
    const own = await pageRows(page);
    assert.deepEqual(own, first, 'the page lists what the first view showed');
    await page.waitForFunction(() => !document.getElementById('first-view'));
    // The results stay where they were (the first view draws the page's folded mode panel above).
    const after = await page.evaluate(top);
    console.log(`results card top: first view ${before} px, page ${after} px`);
    assert.ok(Math.abs(after - before) < 24, `the results card moved from ${before} to ${after} px`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
}

test('no first view where the page must speak: other views, bad input, a search too large', async () => {
  for (const [query, ready] of [
    ['?view=studies', '.studies, #studies-title, h1'],
    ['?view=catalog', 'h1'],
    ['?gpus=abc', '.notice.error'],
    ['?model=gpt3&strategies=2d&gpus=16384&nvs=64&batch=735134400', '.run-status'],
  ]) {
    const page = await newPage(browser);
    await watchFirstView(page);
    await page.goto(server.base + query);
    await page.locator(ready).first().waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.__firstViewSeen ?? false), false, `${query}: a first view was drawn`);
    assert.deepEqual(page.errors, [], query);
    await page.close();
  }
});

test("a permalink to the user's own model: the first view reads the stored catalog", async () => {
  const model = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'own', 'my-10b.json'), 'utf8'));
  const store = JSON.stringify({ format: 'fmperf.custom', schema_version: 1, models: [model], systems: [] });
  const page = await newPage(browser);
  await watchFirstView(page);
  await page.addInitScript((text) => localStorage.setItem('fmperf.custom.v1', text), store);
  const release = await holdPage(page);
  await page.goto(`${server.base}?mode=extended&model=my-10b&gpus=256&batch=1024`);
  const first = await firstViewRows(page);
  assert.ok(first.length > 0, 'the first view found the stored model');
  release();
  assert.deepEqual(await pageRows(page), first);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the page works when the first view cannot load', async () => {
  const page = await newPage(browser);
  await page.route(/first-view-[0-9a-f]+/, (route) => route.abort());
  await page.goto(`${server.base}?mode=reference&list=1d`);
  const rows = await pageRows(page);
  assert.ok(rows.length > 0);
  assert.equal(await page.locator('#first-view').count(), 0);
  assert.deepEqual(page.errors.filter((e) => !/first-view|Failed to load resource/.test(e)), []);
  await page.close();
});

test('the offline file shows the first view drawn ahead, then the page', async () => {
  const page = await newPage(browser);
  await watchFirstView(page);
  await page.goto(pathToFileURL(path.join(DIST, 'fmperf.html')).href);
  const first = await firstViewRows(page);
  assert.ok(first.length > 0);
  const own = await pageRows(page);
  assert.deepEqual(own, first);
  await page.waitForFunction(() => !document.getElementById('first-view'));
  assert.deepEqual(page.errors, []);
  await page.close();
});
