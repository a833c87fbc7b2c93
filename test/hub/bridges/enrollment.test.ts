import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { connect, type MqttClient } from 'mqtt';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UplinkOutbox } from '../../../src/bridge/uplink/outbox.ts';
import { UplinkPublisher } from '../../../src/bridge/uplink/publisher.ts';
import { uplinkMigrationSql } from '../../../src/bridge/uplink/schema.ts';
import { openSqlite } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { uplinkTopic } from '../../../src/hubwire/topics.ts';
import { enrollTopic, makeEnrollRequest, openEnrollReply, signPayload } from '../../../src/hubwire/credentials.ts';
import { startTestHub, type TestHub } from '../helper.ts';
import { eventually, type PrivateBroker, privateBroker } from '../mosquitto.ts';

// Issue 15 item 3: bridges enrolled with their own credentials, end to end through a private
// Mosquitto: POST /api/bridges -> token -> the bridge's publisher trades it over MQTT for its
// tenant, id and secret -> signed events stored; forged tenant, unknown bridge, wrong HMAC,
// unsigned and revoked stored nowhere and counted by reason. The hub here does NOT accept
// unenrolled bridges (the default).

let broker: PrivateBroker;
let hub: TestHub;
let dir: string;
let raw: MqttClient;
const run = Math.random().toString(36).slice(2, 8);
const publishers: UplinkPublisher[] = [];
const dbs: DatabaseSync[] = [];
const bridgeLogs: string[] = [];

test.before(async () => {
  broker = await privateBroker();
  hub = await startTestHub({ mqtt: { url: broker.url, shared: false, clientId: `hub-enroll-${run}`, reconnectMs: 200 } });
  await eventually(() => hub.hub.ingest!.state() === 'connected', 'hub subscribed');
  dir = mkdtempSync(join(tmpdir(), 'fb-'));
  raw = connect(broker.url, { clientId: `raw-${run}`, reconnectPeriod: 0 });
  await new Promise((r) => raw.once('connect', r));
});

test.after(async () => {
  for (const p of publishers) await p.close();
  for (const db of dbs) db.close();
  raw.end(true);
  await hub.stop();
  await broker.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function bridgeDb(name: string): DatabaseSync {
  const db = openSqlite(join(dir, `${name}.db`));
  db.exec(uplinkMigrationSql);
  dbs.push(db);
  return db;
}

function publisher(db: DatabaseSync, token: string | null, tenant = '', bridgeId = 'unused'): UplinkPublisher {
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => bridgeLogs.push(line) });
  const p = new UplinkPublisher({
    db, log, clock: systemClock,
    config: { mqtt_url: broker.url, tenant, bridge_id: bridgeId, username: null, password: null, enrollment_token: token },
    version: '9.9.9', interfaces: () => [], backoff: { baseMs: 100, maxMs: 400 }, ackTimeoutMs: 1000,
  });
  publishers.push(p);
  return p;
}

async function enroll(name: string): Promise<{ id: string; token: string }> {
  const created = await hub.call('POST', '/api/bridges', { body: { name } });
  assert.is(created.status, 201, created.text);
  return created.body;
}

async function rejected(reason: string): Promise<number> {
  const text = (await hub.call('GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`fieldbridge_hub_ingest_rejected_total{reason="${reason}"}`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function storedMessages(tenant: string): Promise<Array<{ bridge_id: string; body: string }>> {
  return hub.hub.store.listEvents(tenant, 'message', 10_000);
}

function publishRaw(topic: string, payload: string): Promise<void> {
  return new Promise((resolve, reject) => raw.publish(topic, payload, { qos: 1 }, (e) => (e ? reject(e) : resolve())));
}

/** Listens for the reply to `nonce`, then publishes the request (by default the payload given
 *  to the nonce's request topic); resolves with the hub's reply. */
async function exchangeRaw(nonce: string, payload: string, alsoPublish: Array<Promise<void>> = []): Promise<Buffer> {
  const got = new Promise<Buffer>((resolve) => raw.on('message', (t, p) => t === enrollTopic(nonce, 'reply') && resolve(p)));
  await new Promise((r) => raw.subscribe(enrollTopic(nonce, 'reply'), { qos: 1 }, r));
  await Promise.all([...alsoPublish, publishRaw(enrollTopic(nonce, 'request'), payload)]);
  return got;
}

const event = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ seq: 1, event_id: id, ts: new Date().toISOString(), text: 'x', ...extra });

test('POST /api/bridges answers the token once; GET lists without tokens or secrets; viewers are refused', async () => {
  const created = await enroll('north mast');
  assert.match(created.token, /^fbe_[a-z2-9]{12}_[A-Za-z0-9_-]{43}$/);
  assert.match(created.id, /^brg_[0-9A-Z]{26}$/);
  const listed = await hub.call('GET', '/api/bridges');
  assert.is(listed.status, 200);
  const mine = listed.body.items.find((b: { id: string }) => b.id === created.id);
  assert.equal({ name: mine.name, state: mine.state, enrolled_at: mine.enrolled_at }, { name: 'north mast', state: 'waiting', enrolled_at: null });
  assert.not.ok(listed.text.includes(created.token.slice(-20)), 'the token is never listed');
  assert.not.ok(/secret|token/.test(Object.keys(mine).join(',')), 'no token or secret field');
  const viewer = await hub.hub.keys.create('default', 'v', 'viewer');
  assert.is((await hub.call('POST', '/api/bridges', { key: viewer.key, body: { name: 'x' } })).status, 403);
  assert.is((await hub.call('GET', '/api/bridges', { key: viewer.key })).status, 403);
  assert.is((await hub.call('POST', '/api/bridges', { body: { name: '' } })).status, 400);
  assert.is((await hub.call('POST', '/api/bridges', { body: { name: 'x', id: 'mine' } })).status, 400, 'no other fields');
  // Another tenant's enrollment answers like a missing one.
  const other = await hub.hub.keys.create(`other-${run}`, 'o', 'owner');
  assert.is((await hub.call('DELETE', `/api/bridges/${created.id}`, { key: other.key })).status, 404);
  assert.is((await hub.call('DELETE', '/api/bridges/brg_NOPE', {})).status, 404);
});

test('a bridge given the token enrolls over MQTT, publishes signed events under the hub\'s tenant and id, and they are stored', async () => {
  const { id, token } = await enroll('south mast');
  const db = bridgeDb('south');
  const p = publisher(db, token);
  assert.is(p.identity().enrolled, false);
  p.start();
  const ids = [p.enqueue('message', { text: 'one' })!, p.enqueue('message', { text: 'two' })!];
  await eventually(() => p.identity().enrolled && p.state() === 'connected', 'enrolled and connected');
  assert.equal({ tenant: p.identity().tenant, bridge_id: p.identity().bridge_id }, { tenant: 'default', bridge_id: id });
  await eventually(async () => (await storedMessages('default')).filter((m) => m.bridge_id === id).length === 2, 'two events stored');
  await eventually(() => p.pending() === 0, 'acknowledged (signed acks taken)');
  const bodies = (await storedMessages('default')).filter((m) => m.bridge_id === id).map((m) => JSON.parse(m.body));
  assert.equal(bodies.map((b) => b.event_id).sort(), [...ids].sort());
  assert.ok(bodies.every((b) => !('sig' in b)), 'the hub stores the event without its signature');
  const listed = (await hub.call('GET', '/api/bridges')).body.items.find((b: { id: string }) => b.id === id);
  assert.is(listed.state, 'enrolled');
  assert.ok(listed.verified_at);
  // The credentials are in the bridge's database (uplink_state), the secret nowhere in its log.
  const creds = new UplinkOutbox(db).credentials()!;
  assert.equal({ tenant: creds.tenant, bridge_id: creds.bridge_id }, { tenant: 'default', bridge_id: id });
  assert.not.ok(bridgeLogs.join('\n').includes(creds.secret), 'secret never logged');
  assert.not.ok(bridgeLogs.join('\n').includes(token.slice(4)), 'token never logged');
  assert.not.ok(hub.logs.join('\n').includes(creds.secret), 'secret never logged by the hub');
  // The token is spent: a second exchange is refused.
  const request = makeEnrollRequest(token, Date.now());
  const opened = openEnrollReply(await exchangeRaw(request.nonce, request.payload), token, request, () => true);
  assert.equal(opened.ok ? 'opened' : opened.refused, 'token_used');
  // A restart uses the stored credentials, with or without the token in the configuration.
  await p.close();
  const again = publisher(db, null, 'ignored-tenant', 'ignored-id');
  assert.equal(again.identity(), { tenant: 'default', bridge_id: id, enrolled: true });
});

test('forged tenant, unknown bridge, wrong HMAC, unsigned and revoked are stored nowhere and counted by reason', async () => {
  const { id, token } = await enroll('east mast');
  const db = bridgeDb('east');
  const p = publisher(db, token);
  p.start();
  await eventually(() => p.state() === 'connected', 'enrolled and connected');
  const secret = Buffer.from(new UplinkOutbox(db).credentials()!.secret, 'base64url');
  const victim = `victim-${run}`;
  await hub.hub.store.ensureTenant(victim, new Date().toISOString());
  const before = {
    wrong_tenant: await rejected('wrong_tenant'), unknown_bridge: await rejected('unknown_bridge'), bad_signature: await rejected('bad_signature'),
    unsigned: await rejected('unsigned'), revoked_bridge: await rejected('revoked_bridge'),
  };
  // The enrolled bridge's own secret cannot write into another tenant.
  const forgedTopic = uplinkTopic(victim, id, 'message');
  await publishRaw(forgedTopic, signPayload(secret, forgedTopic, event(`evt-forged-${run}`)));
  // A bridge id the hub never enrolled, in the victim tenant, unsigned and signed.
  const unknownTopic = uplinkTopic(victim, 'brg-made-up', 'message');
  await publishRaw(unknownTopic, event(`evt-unknown-${run}`));
  await publishRaw(unknownTopic, signPayload(Buffer.alloc(32, 7), unknownTopic, event(`evt-unknown2-${run}`)));
  // The enrolled bridge's topic, signed with a wrong key, with a payload changed after signing,
  // and not signed at all.
  const ownTopic = uplinkTopic('default', id, 'message');
  await publishRaw(ownTopic, signPayload(Buffer.alloc(32, 1), ownTopic, event(`evt-badkey-${run}`)));
  const signed = signPayload(secret, ownTopic, event(`evt-altered-${run}`));
  await publishRaw(ownTopic, signed.replace('"text":"x"', '"text":"y"'));
  await publishRaw(ownTopic, event(`evt-unsigned-${run}`));
  // Signed for another kind's topic (replayed on this one).
  const telemetryTopic = uplinkTopic('default', id, 'telemetry');
  await publishRaw(ownTopic, signPayload(secret, telemetryTopic, event(`evt-replayed-${run}`)));
  // And a correct one: stored.
  await publishRaw(ownTopic, signPayload(secret, ownTopic, event(`evt-good-${run}`, { seq: 999 })));
  await eventually(async () => (await storedMessages('default')).some((m) => m.body.includes(`evt-good-${run}`)), 'the good one stored');

  // Revoked: at once, the bridge's correctly signed events are refused.
  assert.is((await hub.call('DELETE', `/api/bridges/${id}`)).status, 204);
  assert.is((await hub.call('DELETE', `/api/bridges/${id}`)).status, 204, 'revoking twice changes nothing');
  await publishRaw(ownTopic, signPayload(secret, ownTopic, event(`evt-revoked-${run}`)));
  p.enqueue('message', { text: 'after revocation' });
  await eventually(async () => (await rejected('revoked_bridge')) >= before.revoked_bridge + 2, 'revoked counted');
  await eventually(async () => (await rejected('bad_signature')) === before.bad_signature + 3, 'bad signatures counted');
  assert.is(await rejected('wrong_tenant'), before.wrong_tenant + 1);
  assert.is(await rejected('unknown_bridge'), before.unknown_bridge + 2);
  assert.is(await rejected('unsigned'), before.unsigned + 1);

  assert.is(await hub.hub.store.countEvents(victim, 'message'), 0, 'nothing in the victim tenant');
  const ours = (await storedMessages('default')).filter((m) => m.bridge_id === id).map((m) => JSON.parse(m.body).event_id as string);
  // Only the good one; the bridge's own event after revocation is not stored either.
  assert.equal(ours, [`evt-good-${run}`]);
  const listed = (await hub.call('GET', '/api/bridges')).body.items.find((b: { id: string }) => b.id === id);
  assert.is(listed.state, 'revoked');
  // Nothing forged reached the victim's devices or sequence numbers.
  const victimKey = await hub.hub.keys.create(victim, 'v', 'viewer');
  assert.equal((await hub.call('GET', '/api/devices', { key: victimKey.key })).body.items, []);
});

test('until its first signed event the token can be traded again: a newer request makes a new secret, the same or an older one gets the secret held', async () => {
  const { id, token } = await enroll('west mast');
  const ask = async (at: number, replay?: ReturnType<typeof makeEnrollRequest>) => {
    const request = replay ?? makeEnrollRequest(token, at);
    const opened = openEnrollReply(await exchangeRaw(request.nonce, request.payload), token, request, () => true);
    if (!opened.ok) throw new Error(opened.detail);
    return { request, secret: opened.secret };
  };
  const t0 = Date.now();
  const first = await ask(t0);
  assert.is((await ask(t0 - 60_000)).secret.toString('hex'), first.secret.toString('hex'), 'an older request (late, or from a clock behind): the secret held');
  const again = await ask(0, first.request);
  assert.ok(again.secret.equals(first.secret), 'the same request again (a redelivery, a replay): the secret held');
  // A newer request (a lost reply asked again, or a copy of the token used elsewhere): a new
  // secret, and the first one stops working.
  const second = await ask(t0 + 1000);
  assert.not.ok(second.secret.equals(first.secret));
  const replayed = await ask(0, first.request);
  assert.ok(replayed.secret.equals(second.secret), 'a replay of the first request gets the current secret, sealed to the recorded key');
  const topic = uplinkTopic('default', id, 'message');
  const before = await rejected('bad_signature');
  await publishRaw(topic, signPayload(first.secret, topic, event(`evt-old-secret-${run}`)));
  await eventually(async () => (await rejected('bad_signature')) === before + 1, 'the replaced secret refused');
  await publishRaw(topic, signPayload(second.secret, topic, event(`evt-new-secret-${run}`)));
  await eventually(async () => (await storedMessages('default')).some((m) => m.body.includes(`evt-new-secret-${run}`)), 'stored');
  // Someone who only watched the broker saw the request and the reply: with a wrong token the
  // reply does not open, and a request with a wrong token is refused like an unknown one.
  const wrong = 'fbe_' + token.slice(4, 16) + '_' + 'A'.repeat(43);
  const forgedRequest = makeEnrollRequest(wrong, Date.now());
  const refused = openEnrollReply(await exchangeRaw(forgedRequest.nonce, forgedRequest.payload), wrong, forgedRequest, () => true);
  assert.equal(refused.ok ? 'opened' : refused.refused, 'unknown_token');
});

test('a request X25519 refuses (a low-order public key, with a valid proof) is answered bad_request and holds nothing up', async () => {
  const { id, token } = await enroll('poison');
  // Built from the definition (docs/hub.md, "Enrollment"), not by our encoder: proof =
  // HMAC-SHA256 under SHA-256(token) over "fieldbridge enroll request v1\n" + nonce + "\n" +
  // pub + "\n" + ts.
  const nonce = randomBytes(16).toString('base64url');
  const pub = Buffer.alloc(32).toString('base64url');
  const ts = new Date().toISOString();
  const proof = createHmac('sha256', createHash('sha256').update(token).digest()).update(`fieldbridge enroll request v1\n${nonce}\n${pub}\n${ts}`).digest('base64url');
  const lookup = token.slice(4, 16);
  const got = await exchangeRaw(nonce, JSON.stringify({ v: 1, lookup, pub, ts, proof }));
  assert.is(JSON.parse(got.toString()).error, 'bad_request');
  // The hub goes on: a proper exchange right after works, and its events are stored.
  const request = makeEnrollRequest(token, Date.now());
  const opened = openEnrollReply(await exchangeRaw(request.nonce, request.payload), token, request, () => true);
  assert.ok(opened.ok);
  if (!opened.ok) return;
  const topic = uplinkTopic('default', id, 'message');
  await publishRaw(topic, signPayload(opened.secret, topic, event(`evt-after-poison-${run}`)));
  await eventually(async () => (await storedMessages('default')).some((m) => m.body.includes(`evt-after-poison-${run}`)), 'stored after the poison request');
});

test('malformed enrollment requests do not crowd a real one out of its batch', async () => {
  const { token } = await enroll('crowded');
  const before = await rejected('enroll_bad_request');
  const request = makeEnrollRequest(token, Date.now());
  const junk = Array.from({ length: 40 }, (_, i) => publishRaw(enrollTopic(randomBytes(16).toString('base64url'), 'request'), i % 2 ? 'not json' : JSON.stringify({ v: 1, lookup: 'x' })));
  assert.ok(openEnrollReply(await exchangeRaw(request.nonce, request.payload, junk), token, request, () => true).ok, 'answered');
  await eventually(async () => (await rejected('enroll_bad_request')) === before + 40, 'the junk counted');
});

test('a bridge whose token is refused asks again only after minutes, not at every reconnect', async () => {
  const made = await enroll('dead token');
  assert.is((await hub.call('DELETE', `/api/bridges/${made.id}`)).status, 204);
  const before = await rejected('enroll_revoked');
  const p = publisher(bridgeDb('dead'), made.token);
  p.start();
  await eventually(async () => (await rejected('enroll_revoked')) === before + 1, 'refused once');
  // It listens a few seconds more for a sealed reply (a refusal is not authenticated), then
  // waits minutes, not the 100 ms of its reconnect backoff.
  await eventually(() => p.state() === 'backoff', 'waiting after the refusal', 10_000);
  await new Promise((r) => setTimeout(r, 1500));
  assert.is(await rejected('enroll_revoked'), before + 1, 'no second request');
  assert.is(bridgeLogs.filter((l) => l.includes('uplink_enroll_refused')).length, 1);
  assert.is(p.state(), 'backoff');
  await p.close();
});

test('enrolled into another tenant than its queued events were for: those are dropped, not sent there; events queued for the new owner meanwhile are kept across a restart', async () => {
  const { token } = await enroll('handed over');
  const db = bridgeDb('handover');
  // The previous owner's bridge: unsigned, under its own tenant (this hub takes none of it).
  const old = publisher(db, null, `previous-${run}`, 'old-id');
  old.start();
  old.enqueue('message', { text: 'for the previous owner' });
  old.enqueue('message', { text: 'for the previous owner too' });
  await new Promise((r) => setTimeout(r, 300));
  await old.close();
  // The new owner gives it a token while the hub cannot be reached; it queues an event and
  // restarts before the exchange.
  const waiting = new UplinkPublisher({
    db, log: createLogger({ level: 'error', format: 'json', write: () => {} }), clock: systemClock,
    config: { mqtt_url: 'mqtt://127.0.0.1:1', tenant: '', bridge_id: 'unused', username: null, password: null, enrollment_token: token },
    version: '9.9.9', interfaces: () => [], backoff: { baseMs: 100, maxMs: 400 },
  });
  waiting.start();
  const queuedWhileWaiting = waiting.enqueue('message', { text: 'for the new owner, queued while waiting' })!;
  await waiting.close();
  const p = publisher(db, token);
  p.start();
  const fresh = p.enqueue('message', { text: 'for the new owner' })!;
  await eventually(() => p.identity().enrolled && p.state() === 'connected', 'enrolled');
  await eventually(async () => (await storedMessages('default')).some((m) => m.body.includes(fresh)), 'the new event stored');
  await eventually(() => p.pending() === 0, 'outbox empty');
  const texts = (await storedMessages('default')).map((m) => JSON.parse(m.body) as { text: string; event_id: string });
  assert.not.ok(texts.some((t) => t.text.startsWith('for the previous owner')), 'old rows not sent to the new tenant');
  assert.ok(texts.some((t) => t.event_id === queuedWhileWaiting), 'the one queued for the new owner before the restart is kept');
  assert.ok(bridgeLogs.some((l) => l.includes('uplink_outbox_dropped_tenant_changed') && l.includes('"rows":2')));
});

test('an enrolled bridge ignores acks not signed with its secret (an ack deletes outbox rows)', async () => {
  const { id, token } = await enroll('ack mast');
  const db = bridgeDb('acks');
  const p = publisher(db, token);
  p.start();
  await eventually(() => p.state() === 'connected', 'enrolled and connected');
  // The hub goes away; the bridge's rows wait. A forged ack claims them stored.
  await hub.hub.ingest!.close();
  for (let i = 0; i < 5; i++) p.enqueue('message', { text: `held ${i}` });
  await eventually(() => bridgeLogs.some((l) => l.includes('"event":"uplink_resending"') || l.includes('uplink_resending')) || p.pending() === 5, 'rows held');
  await new Promise((r) => setTimeout(r, 300));
  const ackTopic = uplinkTopic('default', id, 'ack');
  const forged = JSON.stringify({ upto: 1_000_000, high: 1_000_000, missing: [], seen: 1_000_000, ts: new Date().toISOString() });
  await publishRaw(ackTopic, forged);
  await publishRaw(ackTopic, signPayload(Buffer.alloc(32, 9), ackTopic, forged));
  await eventually(() => bridgeLogs.some((l) => l.includes('uplink_ack_not_signed')), 'forged ack logged');
  await new Promise((r) => setTimeout(r, 300));
  assert.is(p.pending(), 5, 'no row deleted by a forged ack');
});

test.run();
