// Browser test of Invoices → Issue credit note, in Debian's headless
// Chromium driven by playwright-core. The site arrives with one invoice of
// 20.00 EUR. Here: the invoice list's row action opens its page, which shows
// what is left; a partial credit note is issued from the form, the page then
// lists it and what is left; an amount above what is left is refused and the
// page lists nothing more; the credit note shows in the invoice list's
// column and in Invoices → Credit notes. Screenshots under the given directory.
//
// Usage: node credit-note.mjs BASE_URL OUT_DIR   (exit 0 when every check holds)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { check, launch, loginAsAdmin, submitAndWait } from './lib.mjs';

const [base, outDir] = process.argv.slice(2);
if (!base || !outDir) {
  console.error('usage: node credit-note.mjs BASE_URL OUT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const context = await launch();
try {
  const page = await loginAsAdmin(context, base);
  await page.goto(`${base}/wp-admin/edit.php?post_type=counterfoil_invoice`);
  const row = page.locator('#the-list tr').first();
  const invoice = (await row.locator('.row-title, .title strong').first().innerText()).trim();
  check(/^\d{4}-\d{4}$/.test(invoice), `the invoice list shows ${invoice}`);
  await row.hover();
  await submitAndWait(page, () => row.locator('.credit_note a').click());
  check((await page.locator('#counterfoil-credit-note-invoice').innerText()).includes(`${invoice}: 20.00 EUR`), 'the page names the invoice and its amount');
  check((await page.locator('#counterfoil-credit-note-left').innerText()).includes('20.00 EUR'), 'all of it is left to credit');
  check(await page.inputValue('#counterfoil-credit-note-form input[name=amount]') === '20.00', 'the amount proposed is what is left');

  await page.fill('#counterfoil-credit-note-form input[name=amount]', '7.50');
  await page.fill('#counterfoil-credit-note-form input[name=reason]', 'damaged in transit');
  await submitAndWait(page, () => page.click('#counterfoil-credit-note-form [type=submit]'));
  let notice = (await page.locator('.counterfoil-notice').innerText()).trim();
  const cn = notice.match(/Credit note (\S+) for 7\.50 EUR issued against invoice/);
  check(cn !== null, `issued: "${notice}"`);
  const notes = page.locator('#counterfoil-credit-notes tbody tr');
  check(await notes.count() === 1, 'the invoice lists one credit note');
  const first = await notes.first().innerText();
  check(first.includes(cn[1]) && first.includes('7.50 EUR') && first.includes('damaged in transit'), `it is listed: "${first.trim()}"`);
  check((await page.locator('#counterfoil-credit-note-left').innerText()).includes('12.50 EUR'), '12.50 EUR is left');
  await page.screenshot({ path: join(outDir, 'credit-note-issued.png'), fullPage: true });

  await page.fill('#counterfoil-credit-note-form input[name=amount]', '12.51');
  await page.fill('#counterfoil-credit-note-form input[name=reason]', 'too much');
  await submitAndWait(page, () => page.click('#counterfoil-credit-note-form [type=submit]'));
  notice = (await page.locator('.counterfoil-notice').innerText()).trim();
  check(notice.includes('A refund of 12.51 EUR is more than what is left to credit on invoice ' + invoice + ' (12.50 EUR)'), `refused, in money: "${notice}"`);
  check(await notes.count() === 1, 'still one credit note');

  await page.goto(`${base}/wp-admin/edit.php?post_type=counterfoil_invoice`);
  const related = await page.locator('#the-list tr').first().locator('.counterfoil_related').innerText();
  check(related.includes(cn[1]), `the invoice list shows its credit note: "${related.trim()}"`);
  await page.goto(`${base}/wp-admin/edit.php?post_type=counterfoil_cnote`);
  const listed = await page.locator('#the-list tr').first().innerText();
  check(listed.includes(cn[1]) && listed.includes(invoice), `Credit notes lists ${cn[1]} for ${invoice}: "${listed.trim().replace(/\s+/g, ' ')}"`);
  await page.screenshot({ path: join(outDir, 'credit-note-list.png'), fullPage: true });
  console.log(`CREDIT_NOTE ${cn[1]}`);
} finally {
  await context.close();
}
