import { serve } from '/work/wt/web/tests/e2e/harness.mjs';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '/work/wt/web/tests/e2e/harness.mjs';
const server = await serve();
const extra = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_ARGS, ...extra] });
try {
  for (const mode of ['1', 'off', '2', 'off', '1', '2']) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.addInitScript((m) => localStorage.setItem('fmperf.workers', m), mode);
    await page.goto(`${server.base}?view=studies&preset=strong-scaling&panel=gpt3_1T`);
    await page.locator('#sweep-summary').waitFor({ timeout: 60000 });
    console.log(mode, (await page.locator('#sweep-summary').textContent()).replace(/.* in /, ''));
    await ctx.close();
  }
} finally { await browser.close(); server.stop(); }
