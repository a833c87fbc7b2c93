import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { uplinkMigrationSql } from '../../../src/bridge/uplink/schema.ts';
import { UplinkPublisher, type UplinkPublisherOptions } from '../../../src/bridge/uplink/publisher.ts';
import { openSqlite, transaction } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';
import { startTestHub, type TestHub } from '../../hub/helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../../hub/mosquitto.ts';

// The uplink end to end: bridge outbox -> private Mosquitto -> hub ingest -> hub store.

let broker: PrivateBroker;
let hub: TestHub;
let dir: string;
let db: DatabaseSync;
const tenant = `t${Math.random().toString(36).slice(2, 10)}`;
const publishers: UplinkPublisher[] = [];

test.before(async () => {
  broker = await privateBroker();
  hub = await startTestHub({ mqtt: { url: broker.url, shared: false, acceptUnenrolled: true, clientId: `hub-${tenant}`, reconnectMs: 200 } });
  await hub.hub.store.ensureTenant(tenant, new Date().toISOString());
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
  dir = mkdtempSync(join(tmpdir(), 'fb-'));
  db = openSqlite(join(dir, 'bridge.db'));
  db.exec(uplinkMigrationSql);
});

test.after(async () => {
  for (const p of publishers) await p.close();
  db.close();
  await hub.stop();
  await broker.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function publisher(bridgeId: string, extra: Partial<UplinkPublisherOptions> = {}): UplinkPublisher {
  const p = new UplinkPublisher({
    db,
    log: silentLogger,
    clock: systemClock,
    config: { mqtt_url: broker.url, tenant, bridge_id: bridgeId, username: null, password: null },
    version: '9.9.9',
    interfaces: () => [{ name: 'mesh0', kind: 'meshtastic' }],
    backoff: { baseMs: 100, maxMs: 400 },
    ...extra,
  });
  publishers.push(p);
  return p;
}

async function devices(): Promise<Array<{ bridge_id: string; online: boolean; version: string | null; session: number; interfaces: unknown[] }>> {
  const owner = await hub.hub.keys.create(tenant, 'test', 'viewer');
  return (await hub.call('GET', '/api/devices', { key: owner.key })).body.items;
}

test('broker down: 200 messages wait in the outbox; broker back: the hub stores all 200, each once', async () => {
  await broker.stop();
  const p = publisher('brg-outage');
  p.start();
  assert.is(p.session, 1);
  const ids: string[] = [];
  for (let i = 0; i < 100; i++) ids.push(p.enqueue('message', { text: `hello ${i}`, direction: 'inbound' })!);
  // The other half inside the caller's transactions, as the pipeline writes them.
  transaction(db, () => {
    for (let i = 100; i < 200; i++) ids.push(p.enqueue('message', { text: `hello ${i}`, direction: 'inbound' })!);
  });
  await new Promise((r) => setTimeout(r, 300));
  assert.is(p.pending(), 200);
  assert.is(await hub.hub.store.countEvents(tenant, 'message'), 0);

  await broker.start();
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'message')) === 200, 'hub has 200 messages');
  await eventually(() => p.pending() === 0, 'outbox empty');
  const stored = await hub.hub.store.listEvents(tenant, 'message', 1000);
  assert.equal(stored.map((e) => e.event_id).sort(), [...ids].sort());
  assert.equal(JSON.parse(stored.find((e) => e.event_id === ids[7])!.body).text, 'hello 7');
  await eventually(async () => (await devices()).some((d) => d.bridge_id === 'brg-outage' && d.online), 'bridge online');
  const d = (await devices()).find((x) => x.bridge_id === 'brg-outage')!;
  assert.is(d.version, '9.9.9');
  assert.equal(d.interfaces, [{ name: 'mesh0', kind: 'meshtastic' }]);
  await p.close();
  await eventually(async () => !(await devices()).find((x) => x.bridge_id === 'brg-outage')!.online, 'offline after a clean close');
});

test('a rolled-back transaction publishes nothing; an unknown kind is refused', async () => {
  const p = publisher('brg-tx');
  assert.throws(() => p.enqueue('hello' as never, {}), /unknown uplink event kind/);
  try {
    transaction(db, () => {
      p.enqueue('telemetry', { battery: 80 });
      throw new Error('caller fails');
    });
  } catch {}
  assert.is(p.pending(), 0);
});

test('a restart resumes from the table; the session counts boots; a killed connection marks the bridge offline', async () => {
  await broker.stop();
  const first = publisher('brg-restart');
  first.start();
  const a = first.enqueue('position', { lat: 1, lon: 2 });
  const b = first.enqueue('delivery', { state: 'delivered' });
  await first.close();
  assert.is(first.pending(), 2);
  await broker.start();
  const second = publisher('brg-restart');
  second.start();
  assert.is(second.session, first.session + 1);
  await eventually(async () => (await hub.hub.store.countEvents(tenant, 'position')) === 1 && (await hub.hub.store.countEvents(tenant, 'delivery')) === 1, 'resumed');
  assert.is((await hub.hub.store.listEvents(tenant, 'position'))[0].event_id, a);
  assert.is((await hub.hub.store.listEvents(tenant, 'delivery'))[0].event_id, b);
  await eventually(async () => (await devices()).find((x) => x.bridge_id === 'brg-restart')?.session === second.session, 'status of the new boot');
  // An unclean drop: the broker sends the will, the bridge reconnects and is online again.
  await broker.stop();
  await broker.start();
  await eventually(() => second.state() === 'connected', 'reconnected');
  await eventually(async () => (await devices()).find((x) => x.bridge_id === 'brg-restart')?.online === true, 'online again after the reconnect');
});

test('bad settings are all reported at once', () => {
  try {
    publisher('bad/id', { config: { mqtt_url: 'http://x', tenant: '+', bridge_id: 'bad/id' } });
    assert.unreachable();
  } catch (e) {
    const m = (e as Error).message;
    assert.match(m, 'tenant "+"');
    assert.match(m, 'bridge_id "bad/id"');
    assert.match(m, 'mqtt_url');
  }
});

test.run();
