import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type MqttClient } from 'mqtt';
import { uplinkMigrationSql } from '../../../src/bridge/uplink/schema.ts';
import { UplinkPublisher, type UplinkPublisherOptions } from '../../../src/bridge/uplink/publisher.ts';
import { openSqlite, transaction } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { createLogger, silentLogger } from '../../../src/lib/log.ts';
import { openSqlDriver } from '../../../src/hub/store/store.ts';
import { startTestHub, type TestHub } from '../../hub/helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../../hub/mosquitto.ts';

// Issue 15 item 1, the bridge's side: sequence numbers on the wire, rows deleted on the hub's
// acknowledgement (not the broker's PUBACK), and a restored or recreated database that must
// not reuse numbers the hub has seen.

let broker: PrivateBroker;
let hub: TestHub;
let dir: string;
const tenant = 'acme';
const open: Array<{ p: UplinkPublisher; db: DatabaseSync }> = [];

test.before(async () => {
  broker = await privateBroker();
  dir = mkdtempSync(join(tmpdir(), 'fb-'));
  hub = await startTestHub({ store: { sqlitePath: join(dir, 'hub.db') }, mqtt: { url: broker.url, shared: false, acceptUnenrolled: true, clientId: 'hub-acks', reconnectMs: 200 } });
  await hub.hub.store.ensureTenant(tenant, new Date().toISOString());
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
});

test.after(async () => {
  for (const o of open) {
    await o.p.close();
    if (o.db.isOpen) o.db.close();
  }
  await hub.stop();
  await broker.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function bridgeDb(name: string): DatabaseSync {
  const db = openSqlite(join(dir, name));
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'uplink_outbox'").get()) db.exec(uplinkMigrationSql);
  return db;
}

function publisher(db: DatabaseSync, bridgeId: string, outboxMaxBytes?: number, extra: Partial<UplinkPublisherOptions> = {}): UplinkPublisher {
  const p = new UplinkPublisher({
    db, log: silentLogger, clock: systemClock, config: { mqtt_url: broker.url, tenant, bridge_id: bridgeId }, version: '1.0.0', interfaces: () => [],
    backoff: { baseMs: 100, maxMs: 400 }, ackTimeoutMs: 1000, outboxMaxBytes, ...extra,
  });
  open.push({ p, db });
  return p;
}

const send = (db: DatabaseSync, p: UplinkPublisher, n: number, ids: string[]) => {
  for (let i = 0; i < n; i++) transaction(db, () => ids.push(p.enqueue('message', { n: ids.length })!));
};

async function seqState(bridgeId: string): Promise<{ upto: number; ranges: string }> {
  const driver = openSqlDriver({ sqlitePath: join(dir, 'hub.db') });
  try {
    const [row] = await driver.query('SELECT upto, ranges FROM bridge_seqs WHERE tenant_id = $1 AND bridge_id = $2', [tenant, bridgeId]);
    return { upto: Number(row?.upto ?? 0), ranges: String(row?.ranges ?? '[]') };
  } finally {
    await driver.close();
  }
}

async function storedIds(bridgeId: string): Promise<string[]> {
  return (await hub.hub.store.listEvents(tenant, 'message', 10_000)).filter((e) => e.bridge_id === bridgeId).map((e) => e.event_id).sort();
}

test('events carry seq 1, 2, 3, ...; a row stays until the hub acknowledges it, then goes', async () => {
  const db = bridgeDb('a.db');
  const p = publisher(db, 'brg-seq');
  const watcher: MqttClient = connect(broker.url, { clientId: 'watch-seq', reconnectPeriod: 0 });
  const seen: number[] = [];
  await new Promise((r) => watcher.once('connect', r));
  await watcher.subscribeAsync(`fieldbridge/v1/${tenant}/brg-seq/message`, { qos: 1 });
  watcher.on('message', (_t, payload) => seen.push(JSON.parse(payload.toString()).seq));
  try {
    const ids: string[] = [];
    p.start();
    send(db, p, 20, ids);
    await eventually(() => p.pending() === 0, 'acknowledged and deleted');
    assert.equal(seen.slice(0, 20), Array.from({ length: 20 }, (_, i) => i + 1));
    assert.equal(await storedIds('brg-seq'), [...ids].sort());
    assert.equal(await seqState('brg-seq'), { upto: 20, ranges: '[]' });
  } finally {
    await watcher.endAsync();
  }
});

test('a hub that does not answer (a tenant it does not know): the row is held, the broker\'s acceptance of the online is not enough', async () => {
  const db = bridgeDb('b.db');
  // A tenant the hub does not know: the broker takes every publish, the hub stores nothing
  // and acknowledges nothing.
  const logs: string[] = [];
  const q = new UplinkPublisher({
    db, log: createLogger({ level: 'info', format: 'json', write: (l) => logs.push(l) }), clock: systemClock, config: { mqtt_url: broker.url, tenant: 'nobody', bridge_id: 'brg-nohub' }, version: '1.0.0', interfaces: () => [],
    backoff: { baseMs: 100, maxMs: 400 }, ackTimeoutMs: 1000,
  });
  open.push({ p: q, db });
  q.start();
  q.enqueue('message', { n: 1 });
  await new Promise((r) => setTimeout(r, 1500));
  assert.is(q.pending(), 1, 'still held');
  assert.is(q.numbered, false, 'and not even published: no hub has answered');
  // Issue 15 review item 6: visible as such, and said once in the log.
  assert.is(q.state(), 'waiting_for_hub', 'not "connected": the hub has not answered');
  await eventually(() => logs.some((l) => l.includes('uplink_waiting_for_hub')), 'one warning');
  await new Promise((r) => setTimeout(r, 2500));
  assert.is(logs.filter((l) => l.includes('uplink_waiting_for_hub')).length, 1, 'once, not at every ask');
});

test('a database restored from a backup, with events written before it reaches the hub: numbered past the hub\'s highest, all stored once', async () => {
  const db = bridgeDb('c.db');
  const first = publisher(db, 'brg-restore');
  const ids: string[] = [];
  first.start();
  send(db, first, 50, ids);
  await eventually(() => first.pending() === 0, 'first 50 acknowledged');
  db.exec(`VACUUM INTO '${join(dir, 'c-backup.db')}'`);
  send(db, first, 50, ids);
  await eventually(() => first.pending() === 0, 'next 50 acknowledged');
  await first.close();
  db.close();
  assert.equal(await seqState('brg-restore'), { upto: 100, ranges: '[]' });

  // The backup comes back: its counter says 50. 30 events arrive before it reaches the hub.
  const restored = bridgeDb('c-backup.db');
  const second = publisher(restored, 'brg-restore');
  send(restored, second, 30, ids);
  second.start();
  await eventually(() => second.pending() === 0, 'the 30 acknowledged');
  assert.equal(await storedIds('brg-restore'), [...ids].sort(), 'all 130 stored, none lost to a reused number');
  const state = await seqState('brg-restore');
  assert.equal(state, { upto: 130, ranges: '[]' }, 'numbered 101..130, no gap');

  // A database made anew for the same bridge id: the same.
  const fresh = bridgeDb('c-new.db');
  const third = publisher(fresh, 'brg-restore');
  send(fresh, third, 5, ids);
  third.start();
  await eventually(() => third.pending() === 0, 'the 5 acknowledged');
  assert.equal(await storedIds('brg-restore'), [...ids].sort());
  assert.equal(await seqState('brg-restore'), { upto: 135, ranges: '[]' });
  // And the hub shows it online, though its session counter went back to 1.
  await eventually(async () => (await hub.hub.store.listBridges(tenant)).find((b) => b.bridge_id === 'brg-restore')?.state === 'online', 'online');
});

test('events the outbox cap dropped after they were numbered: the hub asks, the bridge answers "gone", and the hub goes on', async () => {
  const db = bridgeDb('d.db');
  const p = publisher(db, 'brg-gone', 12_000);
  const ids: string[] = [];
  p.start();
  send(db, p, 5, ids);
  await eventually(() => p.pending() === 0, 'first 5 acknowledged');
  await broker.stop();
  const pad = 'x'.repeat(300);
  for (let i = 0; i < 60; i++) transaction(db, () => p.enqueue('telemetry', { pad, i }));
  const kept = p.pending();
  assert.ok(kept < 60, `the cap dropped the oldest telemetry (${60 - kept} of 60)`);
  await broker.start();
  await eventually(() => p.pending() === 0, 'the rest acknowledged');
  await eventually(async () => (await seqState('brg-gone')).upto === 65, 'the dropped numbers reported gone: nothing asked for any more');
  assert.is((await hub.hub.store.listEvents(tenant, 'telemetry', 1000)).filter((e) => e.bridge_id === 'brg-gone').length, kept);
});

test('the hub asks for a gap; the bridge answers with the event, or "gone" for one it no longer holds', async () => {
  const client: MqttClient = connect(broker.url, { clientId: 'fake-bridge', reconnectPeriod: 0 });
  await new Promise((r) => client.once('connect', r));
  const acks: Array<{ upto: number; high: number; missing: number[][] }> = [];
  await client.subscribeAsync(`fieldbridge/v1/${tenant}/brg-fake/ack`, { qos: 1 });
  client.on('message', (_t, payload) => acks.push(JSON.parse(payload.toString())));
  try {
    const ev = (seq: number) => JSON.stringify({ seq, event_id: `evt_fake_${seq}`, ts: '2026-01-01T00:00:00Z' });
    for (const seq of [1, 2, 3, 5, 6, 9]) await client.publishAsync(`fieldbridge/v1/${tenant}/brg-fake/message`, ev(seq), { qos: 1 });
    await eventually(() => acks.some((a) => a.high === 9), 'an ack up to 9');
    assert.equal(acks.at(-1), { ...acks.at(-1)!, upto: 3, high: 9, missing: [[4, 4], [7, 8]] });
    await client.publishAsync(`fieldbridge/v1/${tenant}/brg-fake/gone`, JSON.stringify({ ranges: [[4, 4], [7, 8]], ts: '2026-01-01T00:00:00Z' }), { qos: 1 });
    await eventually(() => acks.at(-1)!.upto === 9, 'gone numbers count as done');
    assert.equal(acks.at(-1)!.missing, []);
  } finally {
    await client.endAsync();
  }
});

// Issue 15 review item 3: numbers at or below the offset (an older copy's) were counted as
// held, so the bridge never answered them gone and the hub asked for them forever.
test('a new database for a bridge id whose old copy left a gap: the gap is answered gone', async () => {
  const old: MqttClient = connect(broker.url, { clientId: 'old-copy', reconnectPeriod: 0 });
  await new Promise((r) => old.once('connect', r));
  try {
    // The old copy sent 1..10, 5 lost on the way.
    for (const s of [1, 2, 3, 4, 6, 7, 8, 9, 10]) await old.publishAsync(`fieldbridge/v1/${tenant}/brg-oldgap/message`, JSON.stringify({ seq: s, event_id: `old${s}`, ts: '2026-01-01T00:00:00.000Z' }), { qos: 1 });
    await eventually(async () => (await seqState('brg-oldgap')).ranges === '[[6,10]]', 'the hub saw 10');
  } finally {
    await old.endAsync();
  }
  const db = bridgeDb('oldgap.db');
  const p = publisher(db, 'brg-oldgap');
  send(db, p, 3, []);
  p.start();
  await eventually(() => p.pending() === 0, 'the 3 acknowledged (as 11..13)');
  await eventually(async () => (await seqState('brg-oldgap')).upto === 13, '5 answered gone: nothing asked for any more');
});

// Issue 15 review item 4: an ack for numbers this bridge never published (another bridge with
// its bridge_id, or forged) deleted rows the hub never had and kept later rows from being sent.
test('an ack beyond what was published deletes nothing unpublished: every event still reaches the hub', async () => {
  const db = bridgeDb('forge.db');
  const logs: string[] = [];
  const p = publisher(db, 'brg-forge', undefined, { window: 2, batch: 1, log: createLogger({ level: 'info', format: 'json', write: (l) => logs.push(l) }) });
  const ids: string[] = [];
  p.start();
  await eventually(() => p.numbered, 'numbered');
  send(db, p, 20, ids);
  const forger: MqttClient = connect(broker.url, { clientId: 'forger', reconnectPeriod: 0 });
  await new Promise((r) => forger.once('connect', r));
  try {
    await forger.publishAsync(`fieldbridge/v1/${tenant}/brg-forge/ack`, JSON.stringify({ upto: 1000, high: 1000, missing: [], ts: new Date().toISOString() }), { qos: 1 });
    // Out of order gaps would claim numbers between them as stored: refused as a whole.
    await forger.publishAsync(`fieldbridge/v1/${tenant}/brg-forge/ack`, JSON.stringify({ upto: 0, high: 2000, missing: [[30, 2000], [1, 29]], ts: new Date().toISOString() }), { qos: 1 });
  } finally {
    await forger.endAsync();
  }
  await eventually(() => logs.some((l) => l.includes('uplink_ack_beyond_sent')), 'warned');
  send(db, p, 5, ids);
  await eventually(() => p.pending() === 0, 'all acknowledged');
  assert.equal(await storedIds('brg-forge'), [...ids].sort(), 'all 25 stored at the hub');
  assert.equal(await seqState('brg-forge'), { upto: 25, ranges: '[]' });
  assert.is(logs.filter((l) => l.includes('uplink_ack_beyond_sent')).length, 1, 'warned once');
  assert.ok(logs.some((l) => l.includes('uplink_bad_ack')), 'the unsorted one refused');
});

test.run();
