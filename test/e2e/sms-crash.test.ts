import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SmsModem } from '../../src/bearers/sms/simulator/modem.ts';
import { SmsNetwork } from '../../src/bearers/sms/simulator/network.ts';
import { serveSmsTcp, type SimTransport } from '../../src/bearers/sms/simulator/serve.ts';
import { type Call, expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess } from '../helpers/api.ts';
import { keepProcessAlive, waitUntil } from '../helpers/sms.ts';

// docs/sms.md, "Receiving": an SMS is deleted from the SIM only after the database committed
// it, so a power cut between the two leaves it on the SIM, and the next start reads it again
// and stores it once. The bridge runs as a real `fieldbridge bridge` process bound to a modem
// this test serves over TCP; it is killed with SIGKILL (no drain, no checkpoint) at the moment
// the modem sees its AT+CMGD for the message, and restarted on the same database.

const NUMBER = '+4917000000001';
// One sender per test: the driver takes two SMS from one sender in the same second for one
// (see the BUG test in sms-bridges.test.ts), and the restarts here take about a second.
const SENDERS = ['+4915199990001', '+4915199990002', '+4915199990003'];
const network = new SmsNetwork();
const modem = new SmsModem({ name: 'e2e-sms-crash', network, number: NUMBER });
const dir = mkdtempSync(join(tmpdir(), 'fb-sms-crash-'));
const dbPath = join(dir, 'bridge.db');
let tcp: SimTransport;
let bridge: RestartableBridge;
let release: () => void;

const call: Call = (method, path, options) => bridge.call(method, path, options);

async function health(): Promise<any> {
  const body = await expectStatus(call, 200, 'GET', '/api/interfaces/health');
  const item = body.items.find((i: { name: string }) => i.name === 'sms');
  assert.ok(item, JSON.stringify(body));
  return item;
}

const waitOnline = () => waitUntil('the sms interface online', async () => {
  const h = await health();
  return h.connected && h.phase === 'online' && h;
}, 20_000, 50);

/** Every stored message with this text (the API's view). */
async function storedWith(text: string): Promise<any[]> {
  const body = await expectStatus(call, 200, 'GET', '/api/messages?limit=100');
  return body.items.filter((m: { text: string | null }) => m.text === text);
}

/** The AT+CMGD lines the host has sent so far. */
const deletes = () => modem.hostLog.filter((l) => /^AT\+CMGD=/i.test(l.line)).length;

test.before(async () => {
  release = keepProcessAlive();
  tcp = await serveSmsTcp(modem, { port: 0 });
  bridge = await startBridgeProcess(dbPath);
  await liftSendLimit(bridge.call);
  // A long poll, so what is found after a restart is found by the start-up listing.
  await expectStatus(call, 201, 'POST', '/api/interfaces', { name: 'sms', kind: 'sms', device: tcp.device, settings: { poll_s: 300 } });
  await expectStatus(call, 201, 'POST', '/api/access-rules', {
    name: 'keep-sms', match: { direction: 'inbound', interfaces: ['sms'] }, schedule: null, action: 'store',
  });
  await waitOnline();
});

test.after(async () => {
  await bridge?.stop();
  await tcp?.close();
  modem.close();
  rmSync(dir, { recursive: true, force: true });
  release?.();
});

test('killed after storing an SMS but before deleting it: found again at start-up, stored once, then deleted', async () => {
  const TEXT = 'Stromausfall Station 7, 03:12';
  // Cut the line at the host's AT+CMGD: the bridge has committed the message, and it dies
  // (SIGKILL) before the delete reaches the modem, like a power cut between the two.
  const original = modem.fromHost.bind(modem);
  let line = '';
  let killed: Promise<void> | null = null;
  modem.fromHost = (chunk: Uint8Array) => {
    if (killed) return;
    for (const byte of chunk) {
      line += String.fromCharCode(byte);
      if (byte !== 0x0d) continue;
      const complete = line;
      line = '';
      if (/AT\+CMGD=/i.test(complete)) {
        killed = bridge.kill();
        return;
      }
      original(Buffer.from(complete, 'latin1'));
    }
  };
  try {
    network.inject(SENDERS[0], NUMBER, TEXT);
    await waitUntil('the bridge to be killed at its AT+CMGD', () => killed !== null, 15_000, 5);
    await killed;
  } finally {
    modem.fromHost = original;
  }
  assert.ok(bridge.process.child.signalCode === 'SIGKILL', 'killed with SIGKILL');
  assert.is(modem.storage.used, 1, 'the SMS is still on the SIM');

  const deletesBefore = deletes();
  await bridge.start();
  await waitOnline();
  const stored = await waitUntil('the SIM to be emptied', async () => modem.storage.used === 0 && storedWith(TEXT), 15_000, 50);
  assert.is(stored.length, 1, `stored once: ${JSON.stringify(stored)}`);
  assert.is(stored[0].from, SENDERS[0]);
  assert.is(stored[0].direction, 'inbound');
  assert.ok(deletes() > deletesBefore, 'the restarted bridge deleted it');
  const h = await health();
  // Read again at start-up and recognised as the message stored before the kill.
  assert.is(h.counters.received, 1);
  assert.is(h.counters.duplicates, 1);
  assert.is(h.device.deleted, 1);
  // The listing at start-up found it: no +CMTI told the new process about it.
  const listed = modem.hostLog.filter((l) => /^AT\+CMGL=/i.test(l.line));
  assert.ok(listed.length >= 2, 'listed at each start');
});

test('killed while the modem holds its answer to AT+CMGD: stored once, nothing left on the SIM', async () => {
  const TEXT = 'Tor 3 offen seit 04:40';
  // The modem takes the delete, but its answer is held long enough for the kill to land first.
  let killed: Promise<void> | null = null;
  const onCommand = (commandLine: string) => {
    if (killed || !/^AT\+CMGD=/i.test(commandLine)) return;
    modem.faults.answerDelayMs = 1500;
    killed = bridge.kill();
  };
  modem.on('command', onCommand);
  try {
    network.inject(SENDERS[1], NUMBER, TEXT);
    await waitUntil('the bridge to be killed at its AT+CMGD', () => killed !== null, 15_000, 5);
    await killed;
  } finally {
    modem.off('command', onCommand);
    modem.faults.answerDelayMs = 0;
  }
  assert.ok(bridge.process.child.signalCode === 'SIGKILL', 'killed with SIGKILL');
  await bridge.start();
  await waitOnline();
  const stored = await waitUntil('the message in the API', async () => {
    const s = await storedWith(TEXT);
    return s.length > 0 && s;
  }, 15_000, 50);
  assert.is(stored.length, 1);
  assert.is(modem.storage.used, 0);
  const h = await health();
  assert.is(h.counters.received, 0, 'nothing was left to read again');
  assert.is(h.counters.duplicates, 0);
});

test('an SMS that arrives while the bridge is down is found by the start-up listing', async () => {
  const TEXT = 'Nachricht während der Wartung ✓';
  assert.is(await bridge.stop(), 0);
  const cmtiBefore = modem.counters.urcs;
  network.inject(SENDERS[2], NUMBER, TEXT);
  await waitUntil('the SMS on the SIM', () => modem.storage.used === 1, 5_000, 10);
  assert.is(modem.counters.urcs, cmtiBefore, 'no host was there to be told');
  await bridge.start();
  await waitOnline();
  const stored = await waitUntil('the SMS stored', async () => {
    const s = await storedWith(TEXT);
    return s.length > 0 && s;
  }, 15_000, 50);
  assert.is(stored.length, 1);
  assert.is(stored[0].from, SENDERS[2]);
  assert.is(stored[0].meta.encoding, 'ucs2');
  await waitUntil('the SIM to be emptied', () => modem.storage.used === 0, 10_000, 20);
  const h = await health();
  assert.is(h.counters.received, 1);
  assert.is(h.counters.duplicates, 0);
  // Every message of this file is there once.
  const all = await expectStatus(call, 200, 'GET', '/api/messages?direction=inbound&limit=100');
  assert.is(all.items.length, 3, JSON.stringify(all.items.map((m: any) => m.text)));
});

test.run();
