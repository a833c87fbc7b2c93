import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestHub, type TestHub } from '../helper.ts';
import { eventually } from '../mosquitto.ts';

// Issue 15, the defect: statuses were ordered by the bridge's boot counter (session) and its
// clock, which a restored or recreated database (session 1 again) or a retained offline with a
// huge session roll back, and the hub then ignored the bridge's online for good. Statuses now
// name their connection (conn): a new connection always wins; a late will of a connection the
// hub has seen replaced never does. Messages go through the ingest as if from the broker
// (decode, batch, store), on the machine's broker with a tenant unique to this run.

const MQTT_URL = process.env.TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const run = Math.random().toString(36).slice(2, 10);
const tenant = `st${run}`;
let hub: TestHub;

test.before(async () => {
  hub = await startTestHub({ mqtt: { url: MQTT_URL, shared: false, acceptUnenrolled: true, clientId: `hub-status-${run}`, sessionExpiryS: 0 } });
  await hub.hub.store.ensureTenant(tenant, new Date().toISOString());
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
});
test.after(async () => {
  await hub.stop();
});

const status = (bridge: string, state: 'online' | 'offline', session: number, ts: string, conn: string) =>
  hub.hub.ingest!.handle(`fieldbridge/v1/${tenant}/${bridge}/status`, Buffer.from(JSON.stringify({ state, session, ts, conn })));
const device = async (bridge: string) => (await hub.hub.store.listBridges(tenant)).find((b) => b.bridge_id === bridge)!;

test('a bridge whose database was restored (session 1 again, its clock behind) is online again on its next connection', async () => {
  await status('brg-restored', 'online', 5, '2026-05-01T10:00:00.000Z', 'connA');
  await status('brg-restored', 'offline', 5, '2026-05-01T10:00:00.000Z', 'connA');
  assert.is((await device('brg-restored')).state, 'offline');
  // The restored database counts from 1, and the Pi's clock came up in the past.
  await status('brg-restored', 'online', 1, '2026-04-01T08:00:00.000Z', 'connB');
  const d = await device('brg-restored');
  assert.is(d.state, 'online', 'the new connection wins');
  assert.is(d.session, 1);
});

test('a retained offline with a huge session does not hold a bridge offline', async () => {
  await status('brg-huge', 'offline', 2 ** 31 - 1, '2030-01-01T00:00:00.000Z', 'connX');
  await status('brg-huge', 'online', 1, '2026-05-01T10:00:00.000Z', 'connY');
  assert.is((await device('brg-huge')).state, 'online');
});

test('the last will of an older connection, delivered after a newer online, is ignored (whatever its session and time)', async () => {
  await status('brg-will', 'online', 3, '2026-05-01T10:00:00.000Z', 'conn1');
  // The bridge reconnects; its database was recreated, so the session went down.
  await status('brg-will', 'online', 1, '2026-05-01T09:00:00.000Z', 'conn2');
  // conn1's will arrives late (the broker noticed the old connection only now).
  await status('brg-will', 'offline', 3, '2026-05-01T10:00:00.000Z', 'conn1');
  assert.is((await device('brg-will')).state, 'online', 'the will of the replaced connection is ignored');
  // The current connection's own will does take it offline.
  await status('brg-will', 'offline', 1, '2026-05-01T09:00:00.000Z', 'conn2');
  assert.is((await device('brg-will')).state, 'offline');
  // A redelivered online of the replaced connection does not bring it back either.
  await status('brg-will', 'online', 3, '2026-05-01T10:00:00.000Z', 'conn1');
  assert.is((await device('brg-will')).state, 'offline');
});

test('statuses without conn (bridges older than issue 15) keep the session rule', async () => {
  const legacy = (state: string, session: number, ts: string) => hub.hub.ingest!.handle(`fieldbridge/v1/${tenant}/brg-old/status`, Buffer.from(JSON.stringify({ state, session, ts })));
  await legacy('online', 4, '2026-05-01T10:00:00.000Z');
  await legacy('offline', 3, '2026-05-01T09:00:00.000Z');
  assert.is((await device('brg-old')).state, 'online');
});

test.run();
