// Use fmperf anywhere: a sub-path host, an iframe, two custom elements on one page, no request
// leaving the origin, and a strict Content-Security-Policy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DIST, launch, newPage, screenshot, staticServer } from './harness.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; frame-src 'self'; object-src 'none'; base-uri 'self'";
/** Waits until the app has rendered its shell in `scope` (a page, frame or shadow-piercing locator root). */
async function appReady(scope) {
  await scope.locator('.app #main-content').first().waitFor({ timeout: 30_000 });
}

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('served from a sub-path, every request stays on the origin', async () => {
  const srv = await staticServer(DIST, { prefix: '/docs/tools/fmperf/' });
  try {
    const page = await newPage(browser);
    const foreign = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(srv.origin) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url());
    });
    await page.goto(srv.base + '?view=explorer');
    await appReady(page);
    await page.getByRole('link', { name: 'About' }).click();
    await page.locator('h1', { hasText: 'About fmperf' }).waitFor();
    assert.match(page.url(), /\/docs\/tools\/fmperf\/\?view=about/);
    assert.deepEqual(foreign, [], 'no request leaves the page origin');
    assert.deepEqual(page.errors, []);
  } finally {
    srv.stop();
  }
});

test('runs under a strict Content-Security-Policy (no inline script, wasm-unsafe-eval only)', async () => {
  const srv = await staticServer(DIST, { csp: CSP });
  try {
    const page = await newPage(browser);
    const violations = [];
    page.on('console', (m) => {
      if (/Content.Security.Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(srv.base);
    await appReady(page);
    await page.goto(srv.base + 'embed.html');
    await page.locator('#demo-element-2').waitFor();
    await appReady(page.frameLocator('#demo-iframe'));
    await appReady(page.locator('#demo-element-1'));
    assert.deepEqual(violations, []);
    assert.deepEqual(page.errors, []);
  } finally {
    srv.stop();
  }
});

test('embed page: an iframe and two independent custom elements', async () => {
  const srv = await staticServer(DIST);
  try {
    const page = await newPage(browser);
    await page.goto(srv.base + 'embed.html');
    const frame = page.frameLocator('#demo-iframe');
    await appReady(frame);
    // embed=1 hides the header in the iframe.
    assert.equal(await frame.locator('.app-header').isVisible(), false);
    const one = page.locator('#demo-element-1');
    const two = page.locator('#demo-element-2');
    await appReady(one);
    await appReady(two);
    // Each element has its own shadow root with its own app.
    const roots = await page.evaluate(() =>
      ['demo-element-1', 'demo-element-2'].map((id) => !!document.getElementById(id).shadowRoot?.querySelector('.app')),
    );
    assert.deepEqual(roots, [true, true]);
    // Navigating inside one element leaves the other and the page URL alone.
    const before = page.url();
    await one.getByRole('link', { name: 'About' }).click();
    await one.locator('h1', { hasText: 'About fmperf' }).waitFor();
    assert.equal(await two.locator('h1', { hasText: 'About fmperf' }).count(), 0);
    assert.equal(page.url(), before);
    await screenshot(page, 'embed-page');
    assert.deepEqual(page.errors, []);
  } finally {
    srv.stop();
  }
});
