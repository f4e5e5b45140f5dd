// The admin pages' live checks (the Rust core as WebAssembly) in Debian's
// headless Chromium: typing changes the preview and the validation, and no
// request reaches the server while typing (network log). Screenshots.
//
// Usage: node live-checks.mjs BASE_URL OUT_DIR
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { check, launch, loginAsAdmin, submitAndWait } from './lib.mjs';

const [base, outDir] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });
const context = await launch();
try {
  const page = await loginAsAdmin(context, base);
  // Anything the page says goes to stderr, for a failure's diagnosis.
  page.on('console', (m) => console.error(`console.${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));

  // Settings: wait for the wasm, then record every request while typing.
  await page.goto(`${base}/wp-admin/options-general.php?page=counterfoil`);
  await page.waitForFunction(() => document.documentElement.dataset.counterfoilWasm === 'ready', null, { timeout: 60000 });
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
  // The typed number and the key are judged by the core, as on the server:
  // no trimming or number parsing of the page's own.
  const advanceSays = () => page.locator('#counterfoil-advance-check').innerText();
  const advanceDisabled = () => page.locator('#counterfoil-advance [type=submit]').isDisabled();
  await page.fill('#counterfoil-advance input[name=next]', '\u30000600 ');
  check((await advanceSays()).includes('will continue at 600'), `surrounding whitespace and leading zeros, as the core reads them: "${await advanceSays()}"`);
  await page.fill('#counterfoil-advance input[name=next]', '1e3');
  check((await advanceSays()).includes('not a whole number') && await advanceDisabled(), `an exponent is not a whole number: "${await advanceSays()}"`);
  await page.fill('#counterfoil-advance input[name=next]', '600');
  await page.fill('#counterfoil-advance input[name=scope_key]', '1:2026 ');
  check((await advanceSays()).includes('starts or ends with whitespace') && await advanceDisabled(), `a key with a trailing space is refused, not trimmed: "${await advanceSays()}"`);
  check(requests.length === 0, `no request while typing (saw ${requests.length}: ${requests.join(', ')})`);
  // The server refuses that key with the same rule.
  await page.evaluate(() => { document.querySelector('#counterfoil-advance [type=submit]').disabled = false; });
  await submitAndWait(page, () => page.click('#counterfoil-advance [type=submit]'));
  const serverSays = await page.locator('.counterfoil-notice').innerText();
  check(serverSays.includes('starts or ends with whitespace'), `the server refuses the same key: "${serverSays.trim()}"`);
  await page.waitForFunction(() => document.documentElement.dataset.counterfoilWasm === 'ready', null, { timeout: 60000 });

  // Tools → AWB check.
  await page.goto(`${base}/wp-admin/tools.php?page=counterfoil-awb`);
  await page.waitForFunction(() => document.documentElement.dataset.counterfoilWasm === 'ready', null, { timeout: 60000 });
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
  await page.fill('#counterfoil-awb-input', '\u3000 ');
  check((await result.innerText()) === '', `whitespace only is no number yet, as the core says: "${await result.innerText()}"`);
  check(requests.length === 0, `no request while typing (saw ${requests.length})`);
  await page.screenshot({ path: join(outDir, 'live-awb.png') });
} finally {
  await context.close();
}
