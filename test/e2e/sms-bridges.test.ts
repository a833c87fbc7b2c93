import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SmsModem } from '../../src/bearers/sms/simulator/modem.ts';
import { SmsNetwork } from '../../src/bearers/sms/simulator/network.ts';
import { serveSmsPty, serveSmsTcp, type SimTransport } from '../../src/bearers/sms/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import { createRule } from '../helpers/routing.ts';
import {
  createSmsInterface, inboundMessages, keepProcessAlive, startSmsBridge, waitDelivery, waitOnline, waitUntil,
} from '../helpers/sms.ts';

// Two bridges, each with an sms interface on its own simulated modem, both modems on one
// simulated operator: bridge A's modem over TCP (a serial server), bridge B's over a
// pseudo-terminal through the serial binding (a USB modem). A forwards what it is asked to
// send to its sms interface; B stores what its modem receives. What an operator sees through
// the API: a GSM-7 text and a 3-part UCS-2 text each stored once by B with exactly the sent
// text and A's number as sender; with delivery_reports, A's delivery delivered only once the
// status report came; a failed report, a retryable and a permanent +CMS ERROR each named in
// the delivery.

const NUMBER_A = '+4915112340001';
const NUMBER_B = '+4915112340002';
const NOWHERE = '+4915112349999';
const network = new SmsNetwork();
const modemA = new SmsModem({ name: 'e2e-sms-a', network, number: NUMBER_A });
const modemB = new SmsModem({ name: 'e2e-sms-b', network, number: NUMBER_B });
let ptyDir: string;
let tcpA: SimTransport;
let ptyB: SimTransport;
let a: TestBridge;
let b: TestBridge;
let release: () => void;

/** When B last stored a message from A (see newSecond). */
let lastAtB = 0;

/** Waits for the next second of the clock after B's last message, so each test's message has
 *  a centre timestamp of its own (the same-second case has its own test below). */
async function newSecond(): Promise<void> {
  await waitUntil('a new second', () => Math.floor(Date.now() / 1000) > Math.floor(lastAtB / 1000), 2_000, 10);
}

const send = async (text: string, to = NUMBER_B) => {
  if (to === NUMBER_B) await newSecond();
  const r = await a.call('POST', '/api/messages/send', { body: { to, text } });
  assert.is(r.status, 202, r.text);
  assert.is(r.body.deliveries.length, 1, r.text);
  return r.body.deliveries[0] as { id: string; state: string };
};

/** Waits until B stored `text` and its modem's SIM is empty again, then checks it was stored
 *  exactly once; returns that message. */
async function storedOnceByB(text: string): Promise<any> {
  await waitUntil(`B to store ${JSON.stringify(text.slice(0, 20))}`, async () => (await inboundMessages(b.call)).some((m) => m.text === text));
  await waitUntil('B\'s SIM to be empty', () => modemB.storage.used === 0);
  lastAtB = Date.now();
  const matching = (await inboundMessages(b.call)).filter((m) => m.text === text);
  assert.is(matching.length, 1, `stored once: ${JSON.stringify(matching)}`);
  return matching[0];
}

test.before(async () => {
  release = keepProcessAlive();
  ptyDir = mkdtempSync(join(tmpdir(), 'fb-sms-e2e-pty-'));
  tcpA = await serveSmsTcp(modemA, { port: 0 });
  ptyB = await serveSmsPty(modemB, { path: join(ptyDir, 'ttySMS0') });
  // A's retry waits are (almost) their ceiling, so `retrying` lasts about a second.
  a = await startSmsBridge({ random: () => 0.999 });
  b = await startSmsBridge();
  await createSmsInterface(a, 'sms', tcpA.device, { delivery_reports: true, report_timeout_s: 20 });
  await createSmsInterface(b, 'sms', ptyB.device);
  await createRule(a.call, 'out-to-sms', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'sms', to: '{to}' }] });
  await createRule(b.call, 'keep-sms', { match: { direction: 'inbound', interfaces: ['sms'] }, action: 'store' });
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpA?.close();
  await ptyB?.close();
  modemA.close();
  modemB.close();
  if (ptyDir) rmSync(ptyDir, { recursive: true, force: true });
  release?.();
});

test('both interfaces come online and show the modem they found', async () => {
  assert.match(tcpA.device, /^tcp:\/\/127\.0\.0\.1:\d+$/);
  for (const t of [a, b]) {
    const h = await waitOnline(t, 'sms');
    assert.is(h.kind, 'sms');
    assert.is(h.last_error, null);
    assert.is(h.device.modem, 'SMS Simulator');
    assert.is(h.device.registration, 'home network');
    assert.is(h.device.signal_csq, 20);
    assert.is(h.device.new_message_indications, '2,1,0,1,0');
  }
});

test('a GSM-7 text from A is stored once by B, from A\'s number, and delivered on its status report', async () => {
  const text = 'Pegel 2,3 m am Wehr; Pumpe [an] {ok} 100€';
  const d = await send(text);
  const heard = await storedOnceByB(text);
  assert.is(heard.from, NUMBER_A);
  assert.is(heard.to, 'local', 'addressed to this SIM, not a broadcast');
  assert.is(heard.kind, 'text');
  assert.is(heard.direction, 'inbound');
  assert.is(heard.meta.encoding, 'gsm7');
  assert.is(heard.meta.parts, 1);
  const done = await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
  assert.is(done.attempts, 1);
  assert.is(done.last_error, null);
  assert.is(done.to, NUMBER_B);
  assert.match(done.result.delivered, /status report/);
  assert.is(done.result.parts, 1);
  assert.is(done.result.encoding, 'gsm7');
  assert.equal(network.textsTo(NUMBER_B), [text]);
});

test('a 3-part UCS-2 text with emoji is stored by B as one message with exactly the sent text', async () => {
  // 3 parts of UCS-2 (67 units each when concatenated): 135-201 UTF-16 units, emoji among them.
  const line = 'Grüße vom Pass 🏔️ Schnee 40 cm ❄️ Wind NW 🌬️, alles gut 👍. ';
  let text = '';
  while (text.length < 170) text += line;
  text = text.trimEnd();
  assert.ok(text.length > 134 && text.length <= 201, `UTF-16 length ${text.length}`);
  const d = await send(text);
  const heard = await storedOnceByB(text);
  assert.is(heard.text, text);
  assert.is(heard.from, NUMBER_A);
  assert.is(heard.meta.encoding, 'ucs2');
  assert.is(heard.meta.parts, 3);
  assert.is(heard.meta.parts_total, 3);
  assert.is(heard.meta.incomplete, undefined);
  const done = await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
  assert.is(done.attempts, 1);
  assert.is(done.result.parts, 3);
  assert.is(done.result.encoding, 'ucs2');
  assert.is(done.result.message_references.length, 3);
  assert.match(done.result.delivered, /status report/);
  const s = await b.call('GET', '/api/interfaces/sms/stats');
  assert.is(s.status, 200, s.text);
  assert.is(s.body.stats.received, 2);
  assert.is(s.body.stats.parts_waiting_for_reassembly, 0);
});

test('with a slow status report the delivery stays `sending` until the report, then is delivered', async () => {
  const before = network.statusReportDelayMs;
  network.statusReportDelayMs = 2500;
  try {
    const d = await send('report comes late');
    const sending = await waitDelivery(a, d.id, 'sending', (x) => x.state === 'sending');
    assert.is(sending.result, null);
    // The SMS is at B already, the report is not back: still sending.
    await storedOnceByB('report comes late');
    const still = await a.call('GET', `/api/deliveries/${d.id}`);
    assert.is(still.body.state, 'sending', still.text);
    const h = await waitOnline(a, 'sms');
    assert.is(h.device.awaiting_reports, 1);
    const done = await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
    assert.is(done.attempts, 1);
    assert.match(done.result.delivered, /status report/);
  } finally {
    network.statusReportDelayMs = before;
  }
});

test('a number the network marks permanently unreachable dead-letters on the failed report', async () => {
  network.setUnreachable(NOWHERE, 'permanent');
  try {
    const d = await send('nobody is there', NOWHERE);
    const dead = await waitDelivery(a, d.id, 'dead', (x) => x.state === 'dead');
    assert.is(dead.attempts, 1);
    assert.match(dead.last_error, /ERR_SMS_REPORT_/);
    assert.match(dead.last_error, /TP-ST 65/);
    assert.is(dead.result, null);
    const letters = await a.call('GET', '/api/deliveries?state=dead');
    assert.ok(letters.body.items.some((x: { id: string }) => x.id === d.id), letters.text);
  } finally {
    network.setUnreachable(NOWHERE, false);
  }
});

test('+CMS ERROR: 331 (no network service) is retried, then delivered', async () => {
  modemA.failNextSends(331, 1);
  const d = await send('second time lucky');
  const retrying = await waitDelivery(a, d.id, 'retrying', (x) => x.state === 'retrying');
  assert.is(retrying.attempts, 1);
  assert.match(retrying.last_error, /ERR_SMS_NO_NETWORK_SERVICE/);
  assert.match(retrying.last_error, /\+CMS ERROR: 331/);
  assert.type(retrying.next_attempt_at, 'string');
  const done = await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
  assert.is(done.attempts, 2);
  assert.match(done.result.delivered, /status report/);
  await storedOnceByB('second time lucky');
});

test('+CMS ERROR: 1 (unassigned number) dead-letters at the first attempt', async () => {
  modemA.failNextSends(1, 1);
  const d = await send('to a number that does not exist');
  const dead = await waitDelivery(a, d.id, 'dead', (x) => x.state === 'dead');
  assert.is(dead.attempts, 1);
  assert.match(dead.last_error, /ERR_SMS_UNASSIGNED_NUMBER/);
  assert.match(dead.last_error, /\+CMS ERROR: 1\b/);
  assert.is(modemA.faults.failSends, null);
  // Nothing went out, so B never got it.
  assert.ok(!network.textsTo(NUMBER_B).includes('to a number that does not exist'));
});

test('after the faults, a text gets through again and B holds every good one once', async () => {
  const d = await send('all clear');
  await waitDelivery(a, d.id, 'delivered', (x) => x.state === 'delivered');
  await storedOnceByB('all clear');
  const texts = (await inboundMessages(b.call)).map((m) => m.text);
  assert.is(texts.length, new Set(texts).size, `no duplicates: ${JSON.stringify(texts)}`);
  assert.is(texts.length, 5);
  const s = await a.call('GET', '/api/interfaces/sms/stats');
  assert.is(s.body.stats.failed, 3);
  assert.is(s.body.stats.awaiting_reports, 0);
});

// Two different single-part SMS from one sender within the same second of the centre's clock
// (1 s resolution) once got the same dedupe key and the second was lost; the key now holds a
// digest of the content (src/bearers/sms/inbox.ts).
test('two different SMS from one sender in the same second are both stored', async () => {
  const SENDER = '+4917612345678';
  await newSecond();
  network.inject(SENDER, NUMBER_B, 'Tank 1 voll');
  network.inject(SENDER, NUMBER_B, 'Tank 2 leer');
  await waitUntil('B\'s SIM to be empty', () => modemB.storage.used === 0);
  const texts = await waitUntil('B to store both', async () => {
    const t = (await inboundMessages(b.call)).filter((m) => m.from === SENDER).map((m) => m.text);
    return t.length >= 2 && t;
  }, 8_000);
  assert.equal([...texts].sort(), ['Tank 1 voll', 'Tank 2 leer']);
});

test.run();
