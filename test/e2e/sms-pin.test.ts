import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SmsModem } from '../../src/bearers/sms/simulator/modem.ts';
import { SmsNetwork } from '../../src/bearers/sms/simulator/network.ts';
import { serveSmsTcp, type SimTransport } from '../../src/bearers/sms/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createSmsInterface, health, keepProcessAlive, startSmsBridge, waitOnline, waitUntil } from '../helpers/sms.ts';

// docs/sms.md, "Bring-up": a SIM that wants a PIN gets it only when it asks, and a wrong PIN
// is never sent twice (three wrong ones lock the SIM). An operator who set the wrong PIN sees
// the interface down with the refusal named, however long the bridge keeps retrying the
// modem; the PIN is a secret, shown as "<redacted>" and never logged; setting the right PIN
// brings the interface online.

const RIGHT_PIN = '4711';
const WRONG_PIN = '0000';
const network = new SmsNetwork();
const modem = new SmsModem({ name: 'e2e-sms-pin', network, number: '+4916000004711', pin: RIGHT_PIN });
let tcp: SimTransport;
let t: TestBridge;
let release: () => void;

const pinLines = () => modem.hostLog.filter((l) => /^AT\+CPIN=/i.test(l.line));
const pinQueries = () => modem.hostLog.filter((l) => /^AT\+CPIN\?/i.test(l.line));
/** The PIN as a token of its own (not inside a longer number). */
const mentions = (text: string, pin: string) => new RegExp(`(^|[^0-9])${pin}([^0-9]|$)`).test(text);

// The bridge's folder is kept across its restart (startSmsBridge keeps a folder it is given).
const dir = mkdtempSync(join(tmpdir(), 'fb-sms-pin-'));

test.before(async () => {
  release = keepProcessAlive();
  tcp = await serveSmsTcp(modem, { port: 0 });
  t = await startSmsBridge({ dir });
});

test.after(async () => {
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
  await tcp?.close();
  modem.close();
  release?.();
});

test('a wrong PIN: the interface stays down naming the refusal, and the PIN is sent once only', async () => {
  const created = await createSmsInterface(t, 'sms', tcp.device, { pin: WRONG_PIN });
  assert.is(created.settings.pin, '<redacted>');
  const down = await waitUntil('the refused PIN in the health', async () => {
    const h = await health(t, 'sms');
    return h.last_error !== null && /PIN/.test(h.last_error) && h;
  });
  assert.is(down.connected, false);
  assert.is.not(down.phase, 'online');
  assert.match(down.last_error, /^ERR_SMS_PIN_WRONG: the SIM refused the PIN; it is not sent again/, down.last_error);
  assert.match(down.last_error, /set the right pin/);
  assert.is(pinLines().length, 1);
  assert.is(modem.sim.pinLeft, 2, 'one try of three spent');

  // The bridge keeps reopening the modem with backoff (1 s, 2 s, ...): every attempt asks the
  // SIM, none sends the PIN again.
  const queriesAtRefusal = pinQueries().length;
  await waitUntil('three more bring-up attempts', () => pinQueries().length >= queriesAtRefusal + 3, 15_000, 50);
  const later = await health(t, 'sms');
  assert.is(later.connected, false);
  assert.is.not(later.phase, 'online');
  assert.match(later.last_error, /the SIM refused the PIN/);
  assert.is(pinLines().length, 1, `AT+CPIN= lines: ${JSON.stringify(pinLines())}`);
  assert.is(modem.sim.state, 'pin');
  assert.is(modem.sim.pinLeft, 2);
});

test('a restart of the bridge does not send the refused PIN again either', async () => {
  await t.stop();
  t = await startSmsBridge({ dir });
  const queries = pinQueries().length;
  await waitUntil('the restarted bridge asks the SIM', () => pinQueries().length > queries, 15_000, 50);
  const h = await waitUntil('the refusal in the health', async () => {
    const x = await health(t, 'sms');
    return x.last_error !== null && /PIN/.test(x.last_error) && x;
  });
  assert.match(h.last_error, /ERR_SMS_PIN_WRONG/);
  assert.is(pinLines().length, 1, `AT+CPIN= lines after the restart: ${JSON.stringify(pinLines())}`);
  assert.is(modem.sim.pinLeft, 2);
});

test('the PIN is shown as <redacted> and never logged', async () => {
  const one = await t.call('GET', '/api/interfaces/sms');
  assert.is(one.status, 200, one.text);
  assert.is(one.body.settings.pin, '<redacted>');
  const list = await t.call('GET', '/api/interfaces');
  assert.is(list.status, 200, list.text);
  assert.ok(!mentions(list.text, WRONG_PIN), list.text);
  assert.ok(list.body.items.every((i: any) => i.kind !== 'sms' || i.settings.pin === '<redacted>'), list.text);
  const audit = await t.call('GET', '/api/audit');
  assert.is(audit.status, 200, audit.text);
  assert.ok(!mentions(audit.text, WRONG_PIN), `audit: ${audit.text}`);
  // The refusal is logged (the operator's journal shows why the interface is down)...
  assert.ok(t.logs.some((l) => /device\.down/.test(l) && /refused the PIN/.test(l)), 'the refusal is logged');
  // The command itself is logged, if at all, with the PIN redacted.
  const leaks = t.logs.filter((l) => mentions(l, WRONG_PIN));
  assert.equal(leaks, [], 'no log line carries the PIN');
});

test('PUT with the right PIN brings the interface online', async () => {
  const current = await t.call('GET', '/api/interfaces/sms');
  const { name, settings, transforms, retry } = current.body;
  const r = await t.call('PUT', '/api/interfaces/sms', { body: { name, settings: { ...settings, pin: RIGHT_PIN }, transforms, retry } });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.settings.pin, '<redacted>');
  assert.is(r.body.settings.poll_s, settings.poll_s, 'the other settings are kept');
  const h = await waitOnline(t, 'sms');
  assert.is(h.last_error, null);
  assert.is(h.device.registration, 'home network');
  assert.is(modem.sim.state, 'ready');
  assert.is(modem.sim.pinLeft, 3);
  const sent = pinLines();
  assert.is(sent.length, 2, 'the wrong PIN once, the right one once');
  // A later PUT that writes the marker back keeps the stored PIN (and does not lock it out).
  const again = await t.call('GET', '/api/interfaces/sms');
  assert.is(again.body.settings.pin, '<redacted>');
  const leaks = t.logs.filter((l) => mentions(l, WRONG_PIN) || mentions(l, RIGHT_PIN));
  assert.equal(leaks, [], 'no log line carries either PIN');
  const list = await t.call('GET', '/api/interfaces');
  assert.ok(!mentions(list.text, RIGHT_PIN), list.text);
});

test.run();
