// Browser test of the books: the series table, the registry with its gap
// report, the invoice list and the dashboard widget, in Debian's headless
// Chromium driven by playwright-core. The site holds 5:2026 (9998–10000) and
// 6:2026 (1–3, number 2 void, number 1's record deleted: a gap).
//
// Usage: node books.mjs BASE_URL OUT_DIR   (exit 0 when every check holds)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { check, launch, loginAsAdmin } from './lib.mjs';

const [base, outDir] = process.argv.slice(2);
if (!base || !outDir) {
  console.error('usage: node books.mjs BASE_URL OUT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const context = await launch();
try {
  const page = await loginAsAdmin(context, base);

  await page.goto(`${base}/wp-admin/options-general.php?page=counterfoil&s=5%3A2026`);
  const row = page.locator('#counterfoil-series tr[data-scope="5:2026"]');
  check(await row.count() === 1, 'the series search finds 5:2026');
  check((await row.locator('.column-next').innerText()).trim() === '10001', 'its next number is 10001');
  check((await row.locator('.column-issued').innerText()).trim() === '3', 'three issued');
  await page.screenshot({ path: join(outDir, 'books-series.png'), fullPage: true });

  await page.goto(`${base}/wp-admin/edit.php?post_type=counterfoil_invoice&page=counterfoil-registry&scope=6%3A2026&gaps=1`);
  check(await page.locator('#counterfoil-registry tr[data-number]').count() === 2, 'the registry lists 6:2026\'s two records');
  check(await page.locator('#counterfoil-registry tr[data-number="2"][data-status="void"]').count() === 1, 'number 2 is void');
  const gap = page.locator('#counterfoil-gaps li[data-scope="6:2026"][data-from="1"]');
  check(await gap.count() === 1, 'the gap report names number 1 of 6:2026');
  await page.screenshot({ path: join(outDir, 'books-registry.png'), fullPage: true });

  await page.goto(`${base}/wp-admin/edit.php?post_type=counterfoil_invoice`);
  const titles = (await page.locator('#the-list .column-title strong').allInnerTexts()).map((t) => t.trim());
  check(titles.indexOf('2026-9999') < titles.indexOf('2026-10000'), `numbers in numeric order: ${titles.join(' ')}`);
  await page.screenshot({ path: join(outDir, 'books-invoices.png'), fullPage: true });

  await page.goto(`${base}/wp-admin/index.php`);
  const widget = await page.locator('#counterfoil-dashboard').innerText();
  check(/issued/.test(widget), `the dashboard widget: ${widget.replace(/\s+/g, ' ')}`);
  await page.screenshot({ path: join(outDir, 'books-dashboard.png'), fullPage: true });
} finally {
  await context.close();
}
