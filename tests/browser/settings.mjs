// Browser test of Settings → Invoice numbers, in Debian's headless Chromium
// driven by playwright-core: log in, create a series at 2, advance it to 200,
// try 100 and see the refusal; screenshots under the given directory.
//
// Usage: node settings.mjs BASE_URL OUT_DIR   (exit 0 when every check holds)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { check, launch, loginAsAdmin, submitAndWait } from './lib.mjs';

const [base, outDir] = process.argv.slice(2);
if (!base || !outDir) {
  console.error('usage: node settings.mjs BASE_URL OUT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const context = await launch();
try {
  const page = await loginAsAdmin(context, base);

  await page.goto(`${base}/wp-admin/options-general.php?page=counterfoil`);
  check(await page.locator('h1', { hasText: 'Invoice numbers' }).count() === 1, 'Settings → Invoice numbers opens');
  const backend = await page.locator('#counterfoil-backend').innerText();
  check(/Backend:/.test(backend), `the page shows the backend (${backend.trim()})`);

  // The webhook secret is masked until "Show".
  check(await page.getAttribute('#counterfoil-secret', 'type') === 'password', 'the webhook secret is masked');
  check((await page.inputValue('#counterfoil-secret')) === '', 'the webhook secret is not in the page');
  await page.click('#counterfoil-secret-reveal');
  await page.waitForFunction(() => document.getElementById('counterfoil-secret').type === 'text', null, { timeout: 10000 });
  check(await page.getAttribute('#counterfoil-secret', 'type') === 'text', '"Show" reveals it');
  check((await page.inputValue('#counterfoil-secret')).length >= 32, 'the revealed secret is the secret');
  await page.click('#counterfoil-secret-reveal');
  check(await page.getAttribute('#counterfoil-secret', 'type') === 'password', '"Hide" masks it again');

  // Create series 1:2026 starting at 2.
  await page.fill('#counterfoil-create input[name=user_id]', '1');
  await page.fill('#counterfoil-create input[name=year]', '2026');
  await page.fill('#counterfoil-create input[name=start]', '2');
  await submitAndWait(page, () => page.click('#counterfoil-create [type=submit]'));
  let notice = await page.locator('.counterfoil-notice').innerText();
  check(notice.includes('Series 1:2026 created') && notice.includes('2'), `create: "${notice.trim()}"`);
  const row = page.locator('#counterfoil-series tr', { hasText: '1:2026' });
  check((await row.locator('.column-next').innerText()).trim() === '2', 'the table shows next number 2');

  // Advance to 200.
  await page.fill('#counterfoil-advance input[name=scope_key]', '1:2026');
  await page.fill('#counterfoil-advance input[name=next]', '200');
  await submitAndWait(page, () => page.click('#counterfoil-advance [type=submit]'));
  notice = await page.locator('.counterfoil-notice').innerText();
  check(notice.includes('the next number is now 200'), `advance to 200: "${notice.trim()}"`);
  check((await row.locator('.column-next').innerText()).trim() === '200', 'the table shows next number 200');
  await page.screenshot({ path: join(outDir, 'settings-advanced.png'), fullPage: true });

  // Try 100: refused in the browser before submit (the core as WebAssembly)…
  await page.fill('#counterfoil-advance input[name=scope_key]', '1:2026');
  await page.fill('#counterfoil-advance input[name=next]', '100');
  const live = await page.locator('#counterfoil-advance-check').innerText();
  check(live.includes('Refused'), `the browser refuses 100 before submit: "${live.trim()}"`);
  // …and by the server when the form is sent anyway (the wasm is convenience, not the guard).
  await submitAndWait(page, () => page.$eval('#counterfoil-advance', (f) => HTMLFormElement.prototype.submit.call(f)));
  notice = await page.locator('.counterfoil-notice.notice-error').innerText();
  check(notice.includes('Refused') && notice.includes('create a new series'), `the server refuses 100 too: "${notice.trim()}"`);
  check((await row.locator('.column-next').innerText()).trim() === '200', 'the series still continues at 200');
  await page.screenshot({ path: join(outDir, 'settings-refusal.png'), fullPage: true });
} finally {
  await context.close();
}
