// The admin pages' live checks (the Rust core as WebAssembly) in Debian's
// headless Chromium: typing changes the preview and the validation, and no
// request reaches the server while typing (network log). Screenshots.
//
// Usage: node live-checks.mjs BASE_URL OUT_DIR
import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, outDir] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });
function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
  console.log(`ok - ${what}`);
}

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'cf-chromium-')), {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 1100 },
});
try {
  const page = context.pages()[0] ?? await context.newPage();
  await page.goto(`${base}/wp-login.php`);
  await page.fill('#user_login', 'admin');
  await page.fill('#user_pass', 'admin-password');
  await Promise.all([page.waitForURL(/wp-admin/), page.click('#wp-submit')]);

  // Settings: wait for the wasm, then record every request while typing.
  await page.goto(`${base}/wp-admin/options-general.php?page=counterfoil`);
  await page.waitForFunction(() => document.documentElement.dataset.counterfoilWasm === 'ready');
  await page.waitForLoadState('networkidle');
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const preview = page.locator('#counterfoil-format-preview');
  const year = String(new Date().getUTCFullYear());
  check((await preview.innerText()).includes(`${year}-0042`), `the preview shows the next number: "${await preview.innerText()}"`);
  await page.fill('#counterfoil-format', 'INV/{yy}/{seq:06}');
  check((await preview.innerText()).includes(`INV/${year.slice(2)}/000042`), `typing a format previews it: "${await preview.innerText()}"`);
  await page.fill('#counterfoil-format', '{year}-{sequence}');
  const bad = await preview.innerText();
  check(bad.includes('unknown token') && bad.includes('byte 7'), `a bad format says what and where: "${bad}"`);
  await page.fill('#counterfoil-advance input[name=scope_key]', '1:2026');
  await page.fill('#counterfoil-advance input[name=next]', '10');
  const refusal = await page.locator('#counterfoil-advance-check').innerText();
  check(refusal.includes('Refused') && refusal.includes('42'), `a lower next number is refused before submit: "${refusal}"`);
  check(await page.locator('#counterfoil-advance [type=submit]').isDisabled(), 'the Advance button is disabled');
  await page.screenshot({ path: join(outDir, 'live-advance-refused.png'), fullPage: true });
  await page.fill('#counterfoil-advance input[name=next]', '500');
  check((await page.locator('#counterfoil-advance-check').innerText()).includes('will continue at 500'), 'a higher one is accepted');
  check(!(await page.locator('#counterfoil-advance [type=submit]').isDisabled()), 'the Advance button is enabled again');
  check(requests.length === 0, `no request while typing (saw ${requests.length}: ${requests.join(', ')})`);

  // Tools → AWB check.
  await page.goto(`${base}/wp-admin/tools.php?page=counterfoil-awb`);
  await page.waitForFunction(() => document.documentElement.dataset.counterfoilWasm === 'ready');
  requests.length = 0;
  const result = page.locator('#counterfoil-awb-result');
  await page.fill('#counterfoil-awb-input', '157-40121013');
  let r = await result.innerText();
  check(r.includes('Invalid') && r.includes('should be 2, not 3'), `a wrong check digit shows the expected one: "${r}"`);
  await page.screenshot({ path: join(outDir, 'live-awb-invalid.png') });
  await page.fill('#counterfoil-awb-input', '157-4012 1012');
  r = await result.innerText();
  check(r.includes('Valid: 157-40121012'), `a valid number shows its canonical form: "${r}"`);
  await page.fill('#counterfoil-awb-input', '157-4O121012');
  check((await result.innerText()).includes('not a digit'), 'a letter is pointed at');
  check(requests.length === 0, `no request while typing (saw ${requests.length})`);
  await page.screenshot({ path: join(outDir, 'live-awb.png') });
} finally {
  await context.close();
}
