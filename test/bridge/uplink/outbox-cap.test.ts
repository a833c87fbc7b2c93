import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { uplinkMigrationSql } from '../../../src/bridge/uplink/schema.ts';
import { UplinkPublisher } from '../../../src/bridge/uplink/publisher.ts';
import { UplinkOutbox } from '../../../src/bridge/uplink/outbox.ts';
import { MAX_PAYLOAD_BYTES } from '../../../src/hubwire/topics.ts';
import { openSqlite, transaction } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { Counter } from '../../../src/lib/metrics.ts';
import { startTestBridge } from '../../helpers/bridge.ts';
import { freePort } from '../../hub/mosquitto.ts';

// Issue 15 item 2: the outbox has a size cap. When full it drops the oldest telemetry and
// position events first, then refuses new events (counted, logged once a minute), and never
// touches routing: the caller's transaction commits all the same. Health and /metrics show
// it; DELETE /api/messages does not empty it (the hub's copy, SPEC 4.6).

test('full: oldest telemetry and position go first, then new events are refused; the caller\'s transaction commits', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const db = openSqlite(join(dir, 'bridge.db'));
  db.exec(uplinkMigrationSql);
  db.exec('CREATE TABLE routed (n INTEGER)');
  const logs: string[] = [];
  const counters = { dropped: new Counter(), refused: new Counter() };
  // Nothing listens on the port: the outbox only fills.
  const p = new UplinkPublisher({
    db, log: createLogger({ level: 'debug', format: 'json', write: (l) => logs.push(l) }), clock: systemClock,
    config: { mqtt_url: `mqtt://127.0.0.1:${await freePort()}`, tenant: 'acme', bridge_id: 'brg-cap' }, version: '1', interfaces: () => [],
    backoff: { baseMs: 1000, maxMs: 1000 }, outboxMaxBytes: 40_000, counters,
  });
  try {
    p.start();
    const pad = 'x'.repeat(300);
    const kinds = (): string[] => (db.prepare('SELECT kind FROM uplink_outbox ORDER BY seq').all() as Array<{ kind: string }>).map((r) => r.kind);
    // 40 telemetry, 20 positions, then messages until full.
    for (let i = 0; i < 40; i++) transaction(db, () => p.enqueue('telemetry', { pad, i }));
    for (let i = 0; i < 20; i++) transaction(db, () => p.enqueue('position', { pad, i }));
    let refused = 0;
    for (let i = 0; i < 150; i++) {
      transaction(db, () => {
        db.prepare('INSERT INTO routed (n) VALUES (?)').run(i);
        if (p.enqueue('message', { pad, i }) === null) refused++;
      });
    }
    assert.is((db.prepare('SELECT count(*) AS n FROM routed').get() as { n: number }).n, 150, 'routing went on: every transaction committed');
    const held = kinds();
    assert.not.ok(held.includes('telemetry') || held.includes('position'), 'telemetry and positions were dropped to make room');
    assert.is(counters.dropped.get({ kind: 'telemetry_or_position' }), 60);
    assert.ok(refused > 0, 'then messages were refused');
    assert.is(counters.refused.get({ kind: 'message' }), refused);
    assert.is(held.length, 150 - refused, 'the oldest messages kept, the newest refused');
    const size = p.outboxSize();
    assert.ok(size.bytes <= 40_000, `within the cap (${size.bytes})`);
    assert.is(size.rows, held.length);
    const full = logs.filter((l) => l.includes('"uplink_outbox_full"'));
    assert.is(full.length, 1, 'logged once a minute, not per event');
  } finally {
    await p.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 15 review items 2 and 8.
test('an event larger than the hub takes is refused at enqueue and counted; sizes are bytes; a record\'s own seq is dropped', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const db = openSqlite(join(dir, 'bridge.db'));
  db.exec(uplinkMigrationSql);
  const logs: string[] = [];
  const counters = { dropped: new Counter(), refused: new Counter() };
  const p = new UplinkPublisher({
    db, log: createLogger({ level: 'debug', format: 'json', write: (l) => logs.push(l) }), clock: systemClock,
    config: { mqtt_url: `mqtt://127.0.0.1:${await freePort()}`, tenant: 'acme', bridge_id: 'brg-big' }, version: '1', interfaces: () => [],
    backoff: { baseMs: 1000, maxMs: 1000 }, counters,
  });
  try {
    // 65,536 control characters: 64 KiB of text, six times that as JSON.
    assert.is(transaction(db, () => p.enqueue('message', { text: '\u0001'.repeat(65536) })), null, 'refused');
    assert.is(transaction(db, () => p.enqueue('message', { text: 'x'.repeat(MAX_PAYLOAD_BYTES) })), null, 'refused at the limit with its seq');
    assert.is(counters.refused.get({ kind: 'message' }), 2);
    assert.is(p.pending(), 0, 'nothing written');
    assert.is(logs.filter((l) => l.includes('uplink_event_too_large')).length, 1, 'logged once a minute');
    // Multi-byte text: counted in bytes when admitted and when counted again.
    for (let i = 0; i < 10; i++) transaction(db, () => p.enqueue('message', { text: '\u00e9\u4e2d\ud83d\ude00'.repeat(100), i }));
    const admitted = p.outboxSize().bytes;
    const counted = new UplinkOutbox(db).size().bytes;
    assert.is(counted, admitted, 'the same units');
    // A record with a top-level seq of its own: dropped, or it would win over the one spliced in.
    transaction(db, () => p.enqueue('telemetry', { seq: 999, battery: 80 }));
    const row = db.prepare("SELECT payload FROM uplink_outbox WHERE kind = 'telemetry'").get() as { payload: string };
    assert.not.ok('seq' in JSON.parse(row.payload), row.payload);
    assert.is(JSON.parse(row.payload).battery, 80);
  } finally {
    await p.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('health and /metrics report the outbox; DELETE /api/messages leaves it alone', async () => {
  const t = await startTestBridge();
  try {
    const port = await freePort();
    const w = await t.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: `mqtt://127.0.0.1:${port}`, tenant: 'acme', outbox_max_mb: 1 } } });
    assert.is(w.status, 200, w.text);
    assert.match((await t.call('GET', '/api/config/hub')).text, /"outbox_max_mb":1\b/);
    await t.call('POST', '/api/interfaces', { body: { name: 'mesh', kind: 'sim', device: 'sim://cap-mesh' } });
    for (let i = 0; i < 5; i++) {
      const r = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!00000001', text: `reading ${i}`, interface: 'mesh' } });
      assert.is(r.status, 202, r.text);
    }
    const count = () => (t.bridge.services.db.prepare('SELECT count(*) AS n FROM uplink_outbox').get() as { n: number }).n;
    const before = count();
    assert.ok(before >= 5, `the outbox holds the events (${before})`);
    const health = await t.call('GET', '/api/health', { key: null });
    assert.is(health.status, 200, health.text);
    assert.is(health.body.uplink.outbox.rows, before);
    assert.is(health.body.uplink.outbox.max_bytes, 1024 * 1024);
    assert.ok(health.body.uplink.outbox.bytes > 0);
    assert.is(typeof health.body.uplink.outbox.oldest_age_s, 'number');
    assert.equal([health.body.uplink.outbox.dropped, health.body.uplink.outbox.refused], [0, 0]);
    const metrics = (await t.call('GET', '/metrics')).text;
    assert.match(metrics, new RegExp(`fieldbridge_uplink_outbox_rows ${before}\\b`));
    assert.match(metrics, /fieldbridge_uplink_outbox_oldest_age_seconds \d+/);
    assert.match(metrics, /fieldbridge_uplink_state\{state="(connecting|backoff)"\} 1/, 'the uplink\'s state (issue 15 review item 6)');
    const cleared = await t.call('DELETE', '/api/messages');
    assert.is(cleared.status, 200, cleared.text);
    assert.ok(cleared.body.deleted >= 5);
    assert.is(count(), before, 'the hub\'s copy is kept');
  } finally {
    await t.stop();
  }
});

test.run();
