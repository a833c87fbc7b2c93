import { connect, type MqttClient } from 'mqtt';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { uplinkTopic } from '../../../src/hubwire/topics.ts';
import { signPayload } from '../../../src/hubwire/credentials.ts';
import { startTestHub, type TestHub } from '../helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../mosquitto.ts';

// HUB_ACCEPT_UNENROLLED=1 (docs/hub.md, "Moving a fleet to enrollment"): a bridge id that was
// never enrolled may publish unsigned; an enrolled id must still sign, a signed unknown id is
// refused, and a revoked one stays refused.

let broker: PrivateBroker;
let hub: TestHub;
let raw: MqttClient;
const run = Math.random().toString(36).slice(2, 8);

test.before(async () => {
  broker = await privateBroker();
  hub = await startTestHub({ mqtt: { url: broker.url, shared: false, clientId: `hub-accept-${run}`, reconnectMs: 200, acceptUnenrolled: true } });
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
  raw = connect(broker.url, { clientId: `raw-accept-${run}`, reconnectPeriod: 0 });
  await new Promise((r) => raw.once('connect', r));
});
test.after(async () => {
  raw.end(true);
  await hub.stop();
  await broker.dispose();
});

const publish = (topic: string, payload: string) => new Promise<void>((resolve, reject) => raw.publish(topic, payload, { qos: 1 }, (e) => (e ? reject(e) : resolve())));
const event = (id: string) => JSON.stringify({ event_id: id, ts: new Date().toISOString(), text: 'x' });
const storedIds = async () => (await hub.hub.store.listEvents('default', 'message', 1000)).map((m) => JSON.parse(m.body).event_id as string);

test('unsigned events of a never-enrolled id are taken; an enrolled id unsigned, or an unknown id signed, are not', async () => {
  assert.ok(hub.logs.some((l) => l.includes('hub_accepting_unenrolled')), 'the hub warns that it runs open');
  const enrolled = (await hub.call('POST', '/api/bridges', { body: { name: 'signed one' } })).body as { id: string };
  await hub.hub.store.enrollmentSecret(enrolled.id, Buffer.alloc(32, 3).toString('base64url'), new Date().toISOString(), new Date().toISOString());
  const legacy = uplinkTopic('default', 'legacy-brg', 'message');
  const mine = uplinkTopic('default', enrolled.id, 'message');
  await publish(legacy, event(`evt-legacy-${run}`));
  await publish(legacy, signPayload(Buffer.alloc(32, 4), legacy, event(`evt-legacy-signed-${run}`)));
  await publish(mine, event(`evt-enrolled-unsigned-${run}`));
  await publish(mine, signPayload(Buffer.alloc(32, 3), mine, event(`evt-enrolled-signed-${run}`)));
  await eventually(async () => (await storedIds()).includes(`evt-enrolled-signed-${run}`), 'the signed one stored');
  assert.equal((await storedIds()).filter((e) => e.endsWith(run)).sort(), [`evt-enrolled-signed-${run}`, `evt-legacy-${run}`]);
  // Revoked: refused even though HUB_ACCEPT_UNENROLLED lets unknown ids in.
  assert.is((await hub.call('DELETE', `/api/bridges/${enrolled.id}`)).status, 204);
  await publish(mine, event(`evt-revoked-unsigned-${run}`));
  await publish(legacy, event(`evt-legacy-2-${run}`));
  await eventually(async () => (await storedIds()).includes(`evt-legacy-2-${run}`), 'later legacy stored');
  assert.not.ok((await storedIds()).includes(`evt-revoked-unsigned-${run}`));
});

test.run();
