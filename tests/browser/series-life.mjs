// Browser test of what governs a series' life on Settings → Invoice numbers,
// in Debian's headless Chromium driven by playwright-core. The site arrives
// with series for users 1 and 2 this year, the `hold` setting, and two
// payments of user 5 waiting for their series. Here: the waiting payments are
// listed; the setting is changed to `continue` and saved; next year's series
// are created ahead with one start number edited; user 5's series is created
// and the waiting payments are completed. Screenshots under the given directory.
//
// Usage: node series-life.mjs BASE_URL OUT_DIR   (exit 0 when every check holds)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { check, launch, loginAsAdmin, submitAndWait } from './lib.mjs';

const [base, outDir] = process.argv.slice(2);
if (!base || !outDir) {
  console.error('usage: node series-life.mjs BASE_URL OUT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const submit = (page, form) => submitAndWait(page, () => page.click(`${form} [type=submit]`));

const context = await launch();
try {
  const page = await loginAsAdmin(context, base);
  await page.goto(`${base}/wp-admin/options-general.php?page=counterfoil`);
  const year = Number(await page.inputValue('#counterfoil-create input[name=year]'));
  check(year >= 2026, `the page's year is the site's (${year})`);

  // The payments waiting for a series.
  const waiting = page.locator('#counterfoil-waiting tbody tr');
  check(await waiting.count() === 2, 'two payments wait for a series');
  check((await waiting.first().innerText()).includes(`5:${year}`), `they wait for series 5:${year}`);
  check(await page.isChecked('#counterfoil-missing-series input[value=hold]'), 'the setting is hold');
  await page.screenshot({ path: join(outDir, 'series-life-waiting.png'), fullPage: true });

  // The setting: continue, first number 1; saved and shown again.
  await page.check('#counterfoil-missing-series input[value=continue]');
  await page.fill('#counterfoil-missing-series input[name=new_series_start]', '1');
  await submit(page, '#counterfoil-settings-form');
  let notice = await page.locator('.counterfoil-notice').innerText();
  check(notice.includes('Settings saved'), `settings saved: "${notice.trim()}"`);
  check(await page.isChecked('#counterfoil-missing-series input[value=continue]'), 'the setting is now continue');

  // Next year's series ahead of time: 1's start edited to 5000, 2's as proposed (its last number + 1).
  const next = year + 1;
  const start1 = page.locator(`#counterfoil-next-year input[name="start[1:${next}]"]`);
  const start2 = page.locator(`#counterfoil-next-year input[name="start[2:${next}]"]`);
  check(await start1.inputValue() === '4', `1:${next} is proposed to continue at 4`);
  check(await start2.inputValue() === '1', `2:${next} is proposed at 1 (nothing issued in 2:${year})`);
  await start1.fill('5000');
  await submit(page, '#counterfoil-next-year');
  notice = await page.locator('.counterfoil-notice').innerText();
  check(notice.includes('Created 2 series'), `created ahead: "${notice.trim()}"`);
  const row = page.locator('#counterfoil-series tr', { hasText: `1:${next}` });
  check((await row.locator('.column-next').innerText()).trim() === '5000', `1:${next} starts at 5000`);

  // Create user 5's series at 1, then complete the waiting payments in order of arrival.
  await page.fill('#counterfoil-create input[name=user_id]', '5');
  await page.fill('#counterfoil-create input[name=year]', String(year));
  await page.fill('#counterfoil-create input[name=start]', '1');
  await submit(page, '#counterfoil-create');
  check((await page.locator('.counterfoil-notice').innerText()).includes(`Series 5:${year} created`), `series 5:${year} created`);
  check((await waiting.first().innerText()).includes('yes'), 'the waiting list sees the series');
  await submit(page, '#counterfoil-complete-waiting');
  notice = await page.locator('.counterfoil-notice').innerText();
  check(notice.includes('Completed 2 waiting payments') && notice.includes('0 still wait'), `completed: "${notice.trim()}"`);
  check(await page.locator('#counterfoil-waiting-none').count() === 1, 'no payment waits any more');
  await page.screenshot({ path: join(outDir, 'series-life-completed.png'), fullPage: true });
} finally {
  await context.close();
}
