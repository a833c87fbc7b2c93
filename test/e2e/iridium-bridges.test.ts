import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IridiumGateway } from '../../src/bearers/iridium/simulator/gateway.ts';
import { IridiumModem } from '../../src/bearers/iridium/simulator/modem.ts';
import { serveIridiumPty, serveIridiumTcp, type SimTransport } from '../../src/bearers/iridium/simulator/serve.ts';
import type { TestBridge } from '../helpers/bridge.ts';
import {
  HostTap, createIridiumInterface, health, inboundMessages, interfaceStats, keepProcessAlive, startIridiumBridge, waitDelivery, waitOnline, waitUntil,
} from '../helpers/iridium.ts';
import { createRule } from '../helpers/routing.ts';

// The Iridium acceptance through the HTTP API of an in-process bridge, once with the
// simulated modem on a pseudo-terminal opened through the serial binding at 19200 baud (a
// RockBLOCK on USB) and once over TCP (a serial server): the same checks for both. The bridge
// forwards every outbound message to its iridium interface with `to: gateway` and stores what
// comes in on it. What an operator sees: a message written with a checksum that is right to
// the byte and delivered with the MOMSN the gateway recorded; two failed sessions retried
// without rewriting the modem's buffer; an oversize message dead at once, naming the split
// transform; MT messages fetched after one ring alert and stored; an MT message that never
// reads cleanly dropped and counted; the modem's IMEI and firmware in health.

const TRANSPORTS = {
  /** serveIridiumPty and serveIridiumTcp use only the device's host side (HostedDevice), though
   *  their parameter is typed IridiumModem: the tap stands in for the modem. */
  pty: async (tap: HostTap, dir: string) => serveIridiumPty(tap as unknown as IridiumModem, { path: join(dir, 'rockblock') }),
  tcp: async (tap: HostTap) => serveIridiumTcp(tap as unknown as IridiumModem),
};

/** The checksum after AT+SBDWB's bytes, summed here by hand (iridium-sbd.md 3.2: the low 16
 *  bits of the byte sum, high byte first), not by the driver's encoder. */
function checksumByHand(payload: Uint8Array): { sum: number; bytes: number[] } {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) sum += payload[i];
  return { sum, bytes: [(sum >> 8) & 0xff, sum & 0xff] };
}

const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const kind of ['pty', 'tcp'] as const) {
  const test = suite(`iridium over ${kind}`);
  const gateway = new IridiumGateway();
  const modem = new IridiumModem({ gateway, name: `e2e-iridium-${kind}` });
  const tap = new HostTap(modem);
  let dir: string;
  let transport: SimTransport;
  let t: TestBridge;
  let ifc: string;
  let release: () => void;

  const send = async (text: string) => {
    const r = await t.call('POST', '/api/messages/send', { body: { to: 'gateway', text } });
    assert.is(r.status, 202, r.text);
    assert.is(r.body.deliveries.length, 1, r.text);
    assert.is(r.body.deliveries[0].to, 'gateway');
    return r.body.deliveries[0] as { id: string };
  };
  const stats = () => interfaceStats(t, ifc);
  const fromGateway = async () => (await inboundMessages(t.call)).filter((m) => m.from === 'gateway');

  test.before(async () => {
    release = keepProcessAlive();
    dir = mkdtempSync(join(tmpdir(), `fb-iridium-e2e-${kind}-`));
    transport = await TRANSPORTS[kind](tap, dir);
    // Retry waits (almost) at their ceiling of 1 s, so each `retrying` can be seen.
    t = await startIridiumBridge({ random: () => 0.999 });
    ifc = (await createIridiumInterface(t, 'sat', transport.device)).id; // baud: the default 19200
    await createRule(t.call, 'out-to-sat', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'sat', to: 'gateway' }] });
    await createRule(t.call, 'keep-sat', { match: { direction: 'inbound', interfaces: ['sat'] }, action: 'store' });
  });

  test.after(async () => {
    try {
      await t?.stop();
      await transport?.close();
    } finally {
      modem.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      release?.();
    }
  });

  test('comes online; health shows the modem\'s IMEI, firmware and model, ring alerts on and registered', async () => {
    assert.match(transport.device, kind === 'tcp' ? /^tcp:\/\/127\.0\.0\.1:\d+$/ : /\/rockblock$/);
    const h = await waitOnline(t, 'sat');
    assert.is(h.kind, 'iridium');
    assert.is(h.last_error, null);
    assert.is(h.device.imei, modem.imei);
    assert.is(h.device.firmware, modem.identity.revision.join('; '));
    assert.is(h.device.model, 'IRIDIUM 9600 Family SBD Transceiver');
    assert.equal([modem.settings.echo, modem.settings.flowControl, modem.settings.mta], [false, 0, 1]);
    await waitUntil('registered', async () => (await health(t, 'sat')).device.registered === true);
  });

  test('a 340-byte message is written with its checksum, byte for byte, and delivered with the MOMSN the gateway recorded', async () => {
    // 170 x "ÿ" (C3 BF): 340 bytes, the most one message carries, summing past 16 bits.
    const text = 'ÿ'.repeat(170);
    const payload = Buffer.from(text, 'utf8');
    const checksum = checksumByHand(payload);
    assert.is(payload.length, 340);
    assert.is(checksum.sum, 65_620);
    assert.equal(checksum.bytes, [0x00, 0x54]);
    const mark = tap.length;
    const received = gateway.received.length;
    const d = await send(text);
    const done = await waitDelivery(t, d.id, 'delivered', (x) => x.state === 'delivered');
    const wire = tap.since(mark);
    const command = Buffer.from('AT+SBDWB=340\r', 'latin1');
    const at = wire.indexOf(command);
    assert.ok(at >= 0, `AT+SBDWB=340 on the wire: ${JSON.stringify(wire.toString('latin1').slice(0, 200))}`);
    assert.is(wire.indexOf(command, at + 1), -1, 'written once');
    const start = at + command.length;
    assert.equal([...wire.subarray(start, start + 342)], [...payload, ...checksum.bytes]);
    assert.is(wire.subarray(start + 342, start + 351).toString('latin1'), 'AT+SBDIX\r', 'the session command follows the checksum, nothing between');
    assert.is(modem.counters.checksumErrors, 0);
    assert.is(gateway.received.length, received + 1);
    const got = gateway.received.at(-1)!;
    assert.equal([...got.payload], [...payload]);
    assert.is(got.duplicate, false);
    assert.is(done.attempts, 1);
    assert.is(done.to, 'gateway');
    assert.equal(done.result, { momsn: got.momsn, mo_status: 0, credits: 7 });
  });

  test('two failed sessions (MO status 18, then 13) are retried; the third delivers without rewriting the buffer', async () => {
    const writes = modem.counters.writes;
    const before = await stats();
    // Not 32 or 36: after "no network service" the driver holds 180 s (docs/iridium.md).
    gateway.script(18, 13);
    const d = await send('third time lucky');
    const first = await waitDelivery(t, d.id, 'retrying after MO 18', (x) => x.state === 'retrying' && x.attempts === 1);
    assert.is(first.last_error, 'ERR_IRIDIUM_SESSION: MO status 18 (the RF connection was lost)');
    const second = await waitDelivery(t, d.id, 'retrying after MO 13', (x) => x.state === 'retrying' && x.attempts === 2);
    assert.is(second.last_error, 'ERR_IRIDIUM_SESSION: MO status 13 (the session did not complete)');
    const done = await waitDelivery(t, d.id, 'delivered', (x) => x.state === 'delivered');
    assert.is(done.attempts, 3);
    assert.is(modem.counters.writes - writes, 1, 'AT+SBDWB once: the retries reused the MO buffer');
    const copies = gateway.received.filter((m) => Buffer.from(m.payload).toString('utf8') === 'third time lucky');
    assert.is(copies.length, 1);
    assert.is(copies[0].duplicate, false);
    assert.equal(done.result, { momsn: copies[0].momsn, mo_status: 0, credits: 1 });
    const after = await stats();
    assert.equal(
      [after.sessions - before.sessions, after.sessions_failed - before.sessions_failed, after.mo_reused - before.mo_reused, after.credits_total - before.credits_total],
      [3, 2, 2, 1],
    );
  });

  test('a 341-byte message is dead at once, naming the split transform; not a byte reaches the modem', async () => {
    const mark = tap.length;
    const writes = modem.counters.writes;
    const d = await send('y'.repeat(341));
    const dead = await waitDelivery(t, d.id, 'dead', (x) => x.state === 'dead');
    assert.is(dead.attempts, 1);
    assert.is(dead.next_attempt_at, null);
    assert.is(dead.last_error, 'ERR_IRIDIUM_TOO_LONG: 341 bytes, but one SBD message carries at most 340 (add a split transform with max_bytes 340 to send it in parts) (not retryable)');
    assert.is(tap.since(mark).length, 0);
    assert.is(modem.counters.writes, writes);
  });

  test('MT: two messages waiting at the gateway come after one ring alert and are stored, from `gateway`', async () => {
    const before = await stats();
    const rings = modem.counters.rings;
    const stored = (await fromGateway()).length;
    // The first waits at the gateway unannounced (queued while the modem was not listening);
    // queueing the second rings the modem once. Two messages, one alert: the second comes with
    // the first session's MT queued count.
    gateway.mailbox(modem.imei).queue.push({ payload: Buffer.from('Sturmwarnung Nord, 9 Bft', 'utf8'), queuedAt: Date.now() });
    gateway.queueMt(modem.imei, 'Bitte melden 🛰️');
    const heard = await waitUntil('both stored', async () => {
      const m = await fromGateway();
      return m.length >= stored + 2 && m;
    });
    assert.is(heard.length, stored + 2);
    assert.equal(heard.slice(0, 2).map((m) => [m.text, m.kind, m.from]), [
      ['Bitte melden 🛰️', 'text', 'gateway'],
      ['Sturmwarnung Nord, 9 Bft', 'text', 'gateway'],
    ]);
    assert.is(modem.counters.rings - rings, 1);
    // The API shows a message as soon as it is written; the driver counts it once it is told
    // the message is committed (a group of ingests commits shortly after: issue 22).
    const after = await waitUntil('both counted', async () => {
      const s = await stats();
      return s.received - before.received >= 2 && s;
    });
    assert.equal(
      [after.ring_alerts - before.ring_alerts, after.mailbox_checks - before.mailbox_checks, after.received - before.received, after.mt_queued, after.mt_bad_checksum],
      [1, 2, 2, 0, 0],
    );
    // Stored first, then cleared from the modem (AT+SBDD1).
    await waitUntil('the MT buffer cleared', () => modem.mt === null);
  });

  test('MT: a message whose every read has a bad checksum is not stored; stats count both reads', async () => {
    const before = await stats();
    const reads = modem.counters.mtRead;
    const stored = (await fromGateway()).length;
    const corrupt = () => void (modem.faults.corruptNextMtChecksum = true);
    modem.on('mt-read', corrupt);
    corrupt();
    try {
      gateway.queueMt(modem.imei, 'hopeless line');
      await waitUntil('the bad reads counted', async () => (await stats()).mt_bad_checksum >= before.mt_bad_checksum + 2);
      await quiet(300); // nothing else happens: no third read, nothing stored
      const after = await stats();
      assert.is(after.mt_bad_checksum - before.mt_bad_checksum, 2, 'read, read again, dropped');
      assert.is(after.received, before.received);
      assert.is(modem.counters.mtRead - reads, 2);
      const heard = await fromGateway();
      assert.is(heard.length, stored);
      assert.not.ok(heard.some((m) => m.text === 'hopeless line'));
    } finally {
      modem.off('mt-read', corrupt);
      modem.faults.corruptNextMtChecksum = false;
    }
    const h = await health(t, 'sat');
    assert.is(h.connected, true);
    assert.is(h.device.mt_bad_checksum, before.mt_bad_checksum + 2);
  });

  test.run();
}
