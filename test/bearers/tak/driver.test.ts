import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CoTParser } from '@tak-ps/node-cot';
import { X509Certificate } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readFileSync, rmSync } from 'node:fs';
import type { BearerState, InboundFrame, NodeReport, OutboundFrame } from '../../../src/bearers/bearer.ts';
import { createTakBearer, GATHER_MS, type TakBearer } from '../../../src/bearers/tak/driver.ts';
import { takStats } from '../../../src/bearers/tak/stats.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';
import { waitUntil } from '../../helpers/api.ts';
import { ATAK_CHAT_ALL, ATAK_PLI } from './fixtures.ts';
import { takEnd, testPki } from './tak-end.ts';

// The TAK bearer against real listeners: a TCP one and a TLS one (client certificate required,
// certificates made by openssl now) standing in for a TAK server, and a multicast group on the
// loopback interface. Every event received is read by @tak-ps/node-cot.

const NODE_KEY = Buffer.alloc(32, 7).toString('base64');

function harness(settings: Record<string, unknown>, startMs = Date.parse('2026-03-01T12:00:00.000Z')) {
  const clock = new FakeClock(startMs);
  const heard: InboundFrame[] = [];
  const nodes: NodeReport[] = [];
  const states: BearerState[] = [];
  const logs: string[] = [];
  const ctx = bearerContext({
    interfaceId: 'if-tak', interfaceName: 'tak', settings, clock,
    log: createLogger({ level: 'debug', format: 'json', write: (l) => logs.push(l) }),
    events: { receive: (f) => void heard.push(f), state: (s) => void states.push(s), nodes: (r) => void nodes.push(...r) },
  });
  const bearer = createTakBearer(ctx);
  return { clock, heard, nodes, states, logs, bearer, online: () => states.at(-1)?.connected === true };
}

const position = (over: Partial<OutboundFrame> & { fix?: Record<string, unknown>; from?: string; node?: Record<string, unknown> } = {}): OutboundFrame => ({
  deliveryId: `d-${Math.random()}`, messageId: 'm-1', to: '^all', channel: null, kind: 'position', text: null,
  payload: Buffer.from(JSON.stringify(over.fix ?? { latitude: 47.5, longitude: 8.25, altitude_m: 410, time: '2026-03-01T11:55:00.000Z' })),
  origin: {
    from: over.from ?? '!a1b2c3d4', interfaceId: 'if-mesh', interfaceName: 'mesh', createdAt: '2026-03-01T11:55:02.000Z', attempt: 1, precedence: 'routine', decision: null,
    node: { id: over.from ?? '!a1b2c3d4', network: 'meshtastic', long_name: 'Trail crew', public_key: NODE_KEY, device_metrics: { battery_level_pct: 81 }, last_heard_at: '2026-03-01T11:55:02.000Z', ...over.node },
  },
});

test('tcp://: a node\'s position reaches the TAK server as its marker, read by node-cot; stale from the fix', async () => {
  const end = await takEnd();
  const h = harness({ min_interval_s: 30, stale_s: 600 });
  try {
    await h.bearer.start(`tcp://127.0.0.1:${end.port}`);
    await waitUntil('online', () => h.online());
    h.clock.advance(GATHER_MS);
    const r = await h.bearer.send(position());
    assert.ok(r.ok, JSON.stringify(r));
    await waitUntil('the server has it', () => end.events.length === 1);
    const cot = CoTParser.from_xml(end.events[0]);
    const a = cot.raw.event._attributes;
    assert.match(a.uid, /^fieldbridge\.key-[0-9a-f]{20}$/);
    assert.equal([a.type, a.how, a.time, a.start, a.stale], ['a-f-G-U-C', 'm-g', '2026-03-01T11:55:00.000Z', '2026-03-01T11:55:00.000Z', '2026-03-01T12:05:00.000Z']);
    const f = await CoTParser.to_geojson(cot);
    assert.equal(f.geometry.coordinates, [8.25, 47.5, 410]);
    assert.is(f.properties.callsign, 'Trail crew');
    assert.equal(f.properties.group, { name: 'Cyan', role: 'Team Member' });
    assert.is(f.properties.remarks, 'battery 81%; last heard 2026-03-01T11:55:02.000Z; via mesh');

    // Renumbered (a new id, the same key): the same marker.
    const again = await h.bearer.send(position({ from: '!0badcafe', fix: { latitude: 47.6, longitude: 8.3, time: '2026-03-01T11:56:00.000Z' } }));
    assert.equal(again, { ok: true, meta: { tak_uid: a.uid, tak: 'waiting' } }, 'within min_interval_s it waits');
    const newer = await h.bearer.send(position({ fix: { latitude: 47.7, longitude: 8.4, time: '2026-03-01T11:57:00.000Z' } }));
    assert.is(newer.ok && newer.meta?.tak, 'waiting');
    h.clock.advance(30_000);
    await waitUntil('the newest one follows', () => end.events.length === 2);
    const second = CoTParser.from_xml(end.events[1]);
    assert.is(second.raw.event._attributes.uid, a.uid, 'one uid per node, across its renumbering');
    assert.is(second.raw.event.point._attributes.lat, 47.7, 'latest only: the replaced fix was never sent');
    const older = await h.bearer.send(position({ fix: { latitude: 1, longitude: 1, time: '2026-03-01T11:00:00.000Z' } }));
    assert.is(older.ok && older.meta?.tak, 'older');
    const nofix = await h.bearer.send(position({ fix: { latitude: 0, longitude: 0 } }));
    assert.equal(nofix.ok, false);
    const stats = takStats.read(h.bearer.stats(), {}, undefined, h.clock);
    assert.equal([stats.positions_sent, stats.positions_waiting_replaced, stats.positions_older_dropped, stats.positions_without_fix], [2, 1, 1, 1]);
  } finally {
    await h.bearer.stop();
    await end.close();
  }
});

test('tcp://: GeoChat from a TAK user is heard as text from its uid; its position is a node report; our own echo is not', async () => {
  const end = await takEnd();
  const h = harness({});
  try {
    await h.bearer.start(`tcp://127.0.0.1:${end.port}`);
    await waitUntil('online', () => h.online() && end.clients.size === 1);
    end.write(`${ATAK_PLI}\n${ATAK_CHAT_ALL}`);
    await waitUntil('heard', () => h.heard.length === 1);
    assert.equal({ ...h.heard[0], payload: null }, {
      from: 'ANDROID-5f2c9a7e1b3d4c60', to: 'All Chat Rooms', channel: null, kind: 'text', text: 'Team 2 at the hut, need water \u{1F4A7}', payload: null,
      meta: { tak_callsign: 'RESCUE-7', tak_room: 'All Chat Rooms', tak_event_uid: 'GeoChat.ANDROID-5f2c9a7e1b3d4c60.All Chat Rooms.9d1f7c2a-3b4e-4f60-8a71-2c5d6e7f8091' },
      dedupeKey: 'tak:GeoChat.ANDROID-5f2c9a7e1b3d4c60.All Chat Rooms.9d1f7c2a-3b4e-4f60-8a71-2c5d6e7f8091',
    });
    assert.equal(h.nodes[0], { id: 'ANDROID-5f2c9a7e1b3d4c60', network: 'tak', long_name: 'RESCUE-7', position: { latitude: 47.3769, longitude: 8.5417, altitude_m: 452.3, time: '2026-03-01T10:00:00.000Z' }, last_heard_at: '2026-03-01T12:00:00.000Z' });

    // A reply to the sender: a direct GeoChat; the server echoing it back is recognised.
    const reply: OutboundFrame = { ...position(), kind: 'text', to: 'ANDROID-5f2c9a7e1b3d4c60', text: 'water on its way', payload: Buffer.from('water on its way') };
    assert.ok((await h.bearer.send(reply)).ok);
    await waitUntil('the server has it', () => end.events.length === 1);
    const chat = CoTParser.from_xml(end.events[0]);
    assert.ok(chat.is_chat());
    const d = chat.raw.event.detail as Record<string, any>;
    assert.is(d.__chat._attributes.senderCallsign, 'Trail crew');
    assert.is(d.__chat._attributes.id, 'ANDROID-5f2c9a7e1b3d4c60');
    assert.is(d.remarks._text, 'water on its way');
    assert.equal(d.marti.dest._attributes, { uid: 'ANDROID-5f2c9a7e1b3d4c60' });
    end.write(end.events[0]);
    await waitUntil('the echo counted', () => (h.bearer.stats() as { echoes_ignored: number }).echoes_ignored === 1);
    assert.is(h.heard.length, 1, 'not heard as a new message');
  } finally {
    await h.bearer.stop();
    await end.close();
  }
});

test('a TAK server that is down: sends answer offline at once (the bridge holds them), it reconnects with backoff', async () => {
  const end = await takEnd();
  const port = end.port;
  await end.close();
  const h = harness({});
  try {
    await h.bearer.start(`tcp://127.0.0.1:${port}`);
    await waitUntil('backoff', () => h.states.at(-1)?.phase === 'backoff');
    assert.match(h.states.at(-1)?.lastError ?? '', /ECONNREFUSED/);
    const r = await h.bearer.send(position());
    assert.equal([r.ok, !r.ok && r.retryable], [false, true]);
  } finally {
    await h.bearer.stop();
  }
});

test('tls://: with the client certificate the server issued; its expiry in stats, a week ahead in the state; the key in neither', async () => {
  const pki = testPki(3);
  const end = await takEnd({ cert: readFileSync(pki.serverCert, 'utf8'), key: readFileSync(pki.serverKey, 'utf8'), ca: readFileSync(pki.ca, 'utf8') });
  // The bridge's clock 3.5 days before the certificate's end (the handshake checks it by the
  // machine's time, at which openssl made it).
  const notAfter = Date.parse(new X509Certificate(readFileSync(pki.clientCert)).validTo);
  const h = harness({ cert_file: pki.clientCert, key_file: pki.clientKey, ca_file: pki.ca }, notAfter - 3.5 * 86_400_000);
  try {
    await h.bearer.start(`tls://127.0.0.1:${end.port}`);
    await waitUntil('online', () => h.online());
    h.clock.advance(GATHER_MS);
    assert.ok((await h.bearer.send(position())).ok);
    await waitUntil('the server has it', () => end.events.length === 1);
    assert.is(CoTParser.from_xml(end.events[0]).raw.event._attributes.type, 'a-f-G-U-C');
    const stats = takStats.read(h.bearer.stats(), {}, undefined, h.clock);
    assert.equal(stats.certificate, { subject: 'CN=fieldbridge', not_after: new Date(notAfter).toISOString(), expires_in_days: 3 });
    const state = h.states.at(-1)!;
    assert.ok(state.connected);
    assert.match(state.lastError ?? '', /^ERR_TAK_CERT_EXPIRING: the client certificate expires at /);
    const key = readFileSync(pki.clientKey, 'utf8').split('\n')[1];
    assert.not.ok(JSON.stringify(h.bearer.stats()).includes(key) || h.logs.join('\n').includes(key), 'the key is in no stats or log');
  } finally {
    await h.bearer.stop();
    await end.close();
    rmSync(pki.dir, { recursive: true, force: true });
  }
});

test('tls://: a server that does not know the client certificate does not take the connection', async () => {
  const pki = testPki(30);
  const other = testPki(30);
  const end = await takEnd({ cert: readFileSync(pki.serverCert, 'utf8'), key: readFileSync(pki.serverKey, 'utf8'), ca: readFileSync(pki.ca, 'utf8') });
  const h = harness({ cert_file: other.clientCert, key_file: other.clientKey, ca_file: pki.ca });
  try {
    await h.bearer.start(`tls://127.0.0.1:${end.port}`);
    await waitUntil('refused', () => h.states.some((s) => s.phase === 'backoff'));
    assert.is(end.events.length, 0);
  } finally {
    await h.bearer.stop();
    await end.close();
    rmSync(pki.dir, { recursive: true, force: true });
    rmSync(other.dir, { recursive: true, force: true });
  }
});

test('udp:// multicast on the loopback interface: a position goes to the group, GeoChat from the group is heard', async () => {
  const group = '239.2.3.1';
  const listener = createSocket({ type: 'udp4', reuseAddr: true });
  const got: string[] = [];
  listener.on('message', (m) => got.push(m.toString('utf8')));
  const port = 20_000 + (process.pid % 20_000);
  await new Promise<void>((resolve) => listener.bind(port, resolve));
  let joined = true;
  try {
    listener.addMembership(group, '127.0.0.1');
  } catch {
    joined = false;
  }
  const h = harness({ multicast_interface: '127.0.0.1' });
  try {
    if (!joined) {
      console.log('  skipped: this machine does not let a socket join a multicast group on the loopback interface');
      return;
    }
    await h.bearer.start(`udp://${group}:${port}`);
    await waitUntil('online', () => h.online());
    h.clock.advance(GATHER_MS);
    assert.ok((await h.bearer.send(position())).ok);
    await waitUntil('the group has it', () => got.some((x) => x.includes('type="a-f-G-U-C"')));
    assert.match(CoTParser.from_xml(got.find((x) => x.includes('a-f-G-U-C'))!).raw.event._attributes.uid, /^fieldbridge\.key-/);
    await new Promise<void>((resolve) => listener.setMulticastInterface('127.0.0.1') === undefined && listener.send(ATAK_CHAT_ALL, port, group, () => resolve()));
    await waitUntil('heard from the group', () => h.heard.length === 1);
    assert.is(h.heard[0].from, 'ANDROID-5f2c9a7e1b3d4c60');
    assert.ok((h.bearer.stats() as { echoes_ignored: number }).echoes_ignored >= 1, 'its own datagram, looped back, is not heard');
  } finally {
    await h.bearer.stop();
    listener.close();
  }
});

test.run();
