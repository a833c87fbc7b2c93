import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type MqttClient } from 'mqtt';
import { uplinkMigrationSql } from '../../../src/bridge/uplink/schema.ts';
import { UplinkPublisher } from '../../../src/bridge/uplink/publisher.ts';
import { openSqlite, transaction } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';
import { startTestBridge } from '../../helpers/bridge.ts';
import { eventually, type PrivateBroker, privateBroker } from '../../hub/mosquitto.ts';

// Issue 15 review items 5 and 6, against a stand-in hub that answers as slowly as we say:
// the ack timeout after a quiet moment, and a bridge whose hub never answers.

let broker: PrivateBroker;
test.before(async () => {
  broker = await privateBroker();
});
test.after(async () => {
  await broker.dispose();
});

/** A hub stand-in: answers each online at once, and acknowledges events ackDelayMs after them. */
async function fakeHub(bridgeId: string, ackDelayMs: number): Promise<{ sends: Map<number, number>; end(): Promise<void> }> {
  const client: MqttClient = connect(broker.url, { clientId: `fake-hub-${bridgeId}`, reconnectPeriod: 0 });
  await new Promise((r) => client.once('connect', r));
  const base = `fieldbridge/v1/acme/${bridgeId}`;
  const sends = new Map<number, number>();
  let upto = 0;
  const ack = (conn?: string) => client.publish(`${base}/ack`, JSON.stringify({ upto, high: upto, missing: [], seen: upto, ...(conn ? { conn } : {}), ts: new Date().toISOString() }), { qos: 1 });
  await client.subscribeAsync([`${base}/status`, `${base}/message`], { qos: 1 });
  client.on('message', (topic, payload) => {
    const body = JSON.parse(payload.toString());
    if (topic.endsWith('/status')) {
      if (body.state === 'online') ack(body.conn);
      return;
    }
    sends.set(body.seq, (sends.get(body.seq) ?? 0) + 1);
    setTimeout(() => {
      if (body.seq === upto + 1) upto = body.seq;
      ack();
    }, ackDelayMs);
  });
  return { sends, end: () => client.endAsync() };
}

test('after a quiet moment longer than the ack timeout, each event is published once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const db = openSqlite(join(dir, 'bridge.db'));
  db.exec(uplinkMigrationSql);
  const hub = await fakeHub('brg-quiet', 600);
  const p = new UplinkPublisher({
    db, log: silentLogger, clock: systemClock, config: { mqtt_url: broker.url, tenant: 'acme', bridge_id: 'brg-quiet' }, version: '1', interfaces: () => [],
    backoff: { baseMs: 100, maxMs: 400 }, ackTimeoutMs: 1000,
  });
  try {
    p.start();
    await eventually(() => p.numbered, 'numbered');
    for (let k = 0; k < 3; k++) {
      // Quiet for longer than the ack timeout, then one event the hub acknowledges after 600 ms.
      await new Promise((r) => setTimeout(r, 1500));
      transaction(db, () => p.enqueue('message', { k }));
      await eventually(() => p.pending() === 0, `event ${k + 1} acknowledged`);
    }
    assert.equal([...hub.sends], [[1, 1], [2, 1], [3, 1]], 'no resend: the timeout runs from the publish');
  } finally {
    await p.close();
    await hub.end();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no hub answers: health and /metrics say waiting_for_hub, not connected', async () => {
  const t = await startTestBridge();
  try {
    const w = await t.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: broker.url, tenant: 'nohub' } } });
    assert.is(w.status, 200, w.text);
    await eventually(async () => (await t.call('GET', '/api/health', { key: null })).body.uplink?.state === 'waiting_for_hub', 'waiting_for_hub in health');
    const metrics = (await t.call('GET', '/metrics')).text;
    assert.match(metrics, /fieldbridge_uplink_state\{state="waiting_for_hub"\} 1/);
    assert.match(metrics, /fieldbridge_uplink_state\{state="connected"\} 0/);
  } finally {
    await t.stop();
  }
});

test.run();
