// Browser test of the invoice number where a WooCommerce shop sees it, in
// Debian's headless Chromium driven by playwright-core: the orders list's
// column, the order page, the customer's e-mail sent on payment and My
// Account's order view (against the WooCommerce stand-in, or a real
// WooCommerce: the Rust test passes the pages' paths). Screenshots under the
// given directory.
//
// Usage: node woocommerce.mjs BASE_URL OUT_DIR NUMBER ORDERS_PATH ORDER_PATH
//        ACCOUNT_PATH MAIL_HTML_FILE CUSTOMER_LOGIN CUSTOMER_PASSWORD
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, launch, loginAsAdmin } from './lib.mjs';

const [base, outDir, number, ordersPath, orderPath, accountPath, mailFile, customer, password] = process.argv.slice(2);
if (!password) {
  console.error('usage: node woocommerce.mjs BASE_URL OUT_DIR NUMBER ORDERS_PATH ORDER_PATH ACCOUNT_PATH MAIL_HTML_FILE CUSTOMER_LOGIN CUSTOMER_PASSWORD');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const context = await launch();
try {
  const page = await loginAsAdmin(context, base);
  await page.goto(`${base}${ordersPath}`);
  await page.screenshot({ path: join(outDir, 'orders-column.png'), fullPage: true });
  const header = page.locator('th#counterfoil_invoice, th.column-counterfoil_invoice').first();
  check((await header.innerText()).includes('Invoice'), 'the orders list has the Invoice column');
  const cells = await page.locator('td.column-counterfoil_invoice, td.counterfoil_invoice').allInnerTexts();
  check(cells.some((c) => c.includes(number)), `the column shows ${number}: ${JSON.stringify(cells)}`);

  await page.goto(`${base}${orderPath}`);
  const field = (await page.locator('.counterfoil-order-invoice').innerText()).trim();
  check(field.includes('Invoice number:') && field.includes(number), `the order page shows "${field}"`);
  await page.locator('.counterfoil-order-invoice').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(outDir, 'order-page.png'), fullPage: true });

  // The customer's e-mail as it was sent on payment (captured by the test site).
  const mail = await context.newPage();
  await mail.setContent(readFileSync(mailFile, 'utf8'));
  const line = (await mail.locator('.counterfoil-email-invoice').innerText()).trim();
  check(line === `Invoice number: ${number}`, `the e-mail says "${line}"`);
  await mail.screenshot({ path: join(outDir, 'order-email.png'), fullPage: true });

  // My Account, as the customer.
  await context.clearCookies();
  await page.goto(`${base}/wp-login.php`);
  await page.fill('#user_login', customer);
  await page.fill('#user_pass', password);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout: 60000 }), page.click('#wp-submit')]);
  await page.goto(`${base}${accountPath}`);
  const mine = (await page.locator('.counterfoil-customer-invoice').innerText()).trim();
  check(mine.includes(number), `My Account's order view shows "${mine}"`);
  await page.screenshot({ path: join(outDir, 'my-account.png'), fullPage: true });
} finally {
  await context.close();
}
