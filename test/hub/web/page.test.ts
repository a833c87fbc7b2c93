import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { launchChromium } from '../../helpers/chromium.ts';
import { startTestHub, type TestHub } from '../helper.ts';

// Code inside page.evaluate runs in the browser, where document exists; this project's
// TypeScript setup has no DOM library.
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

// The web page in a real headless Chromium (Debian's chromium with playwright-core). Page-side
// checks reach the DOM through globalThis: the project's type-check has no DOM library, and
// the page's CSP forbids the string form (eval).

let browser: Browser;
let hub: TestHub;

test.before(async () => {
  browser = await launchChromium();
  hub = await startTestHub({ setup: false });
});
test.after(async () => {
  await browser.close();
  await hub.stop();
});

test('first visit: the setup token makes the first owner key; then keys are listed, created and deleted', async () => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => void d.accept());
  await page.goto(hub.url + '/');
  assert.is(await page.title(), 'fieldbridge hub: API keys');

  await page.fill('#setup-token', 'fbs_not-the-token');
  await page.click('#setup button[type=submit]');
  await page.waitForFunction(() => (globalThis as any).document.getElementById('message').textContent.includes('setup token'));
  assert.ok(await page.isHidden('#keys'));

  await page.fill('#setup-token', hub.hub.setupToken!);
  await page.fill('#setup-label', 'my first key');
  await page.click('#setup button[type=submit]');
  await page.waitForSelector('#key-list tr');
  const secret = (await page.textContent('#new-key-value'))!;
  assert.match(secret, /^fbh_/);
  assert.is((await hub.call('GET', '/api/auth/keys', { key: secret })).status, 200, 'the shown key works');

  await page.fill('#create-label', 'field laptop');
  await page.selectOption('#create-role', 'admin');
  await page.click('#create button[type=submit]');
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#key-list tr').length === 2);
  const adminKey = (await page.textContent('#new-key-value'))!;
  assert.is.not(adminKey, secret);
  assert.equal(await page.$$eval('#key-list tr td:first-child', (tds) => tds.map((t) => t.textContent)), ['my first key', 'field laptop']);

  await page.click('#key-list tr:nth-child(2) button.delete');
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#key-list tr').length === 1);
  assert.is((await hub.call('GET', '/api/devices', { key: adminKey })).status, 401, 'deleted from the page: refused at once');

  // A reload keeps the key for this tab; the setup form is gone for good.
  await page.reload();
  await page.waitForSelector('#key-list tr');
  assert.is(await page.$('#setup'), null);
  await page.click('#signout');
  await page.waitForSelector('#signin', { state: 'visible' });
  await page.fill('#signin-key', 'fbh_wrong');
  await page.click('#signin button[type=submit]');
  await page.waitForFunction(() => (globalThis as any).document.getElementById('message').textContent !== '');
  assert.ok(await page.isHidden('#keys'));
  await page.fill('#signin-key', secret);
  await page.click('#signin button[type=submit]');
  await page.waitForSelector('#key-list tr');
  assert.equal(errors, [], 'no script errors (CSP included)');
  await page.close();
});

test.run();
