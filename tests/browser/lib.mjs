// Shared by the browser tests: Debian's headless Chromium through
// playwright-core (fresh profile, no background networking), a WordPress
// login, and a check that prints `ok - …` or throws.
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
  console.log(`ok - ${what}`);
}

export async function launch() {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'cf-chromium-')), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 1100 },
  });
}

// Sends a form and waits for the page it leads to: the navigation itself,
// then that page's load (waiting for the old page's load state passes at
// once on a loaded machine, before the new page exists).
export async function submitAndWait(page, send) {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load', timeout: 60000 }), send()]);
}

export async function loginAsAdmin(context, base) {
  const page = context.pages()[0] ?? await context.newPage();
  await page.goto(`${base}/wp-login.php`);
  await page.fill('#user_login', 'admin');
  await page.fill('#user_pass', 'admin-password');
  await Promise.all([page.waitForURL(/wp-admin/, { waitUntil: 'load', timeout: 60000 }), page.click('#wp-submit')]);
  check(page.url().includes('/wp-admin'), 'logged in as admin');
  return page;
}
