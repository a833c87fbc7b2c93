import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bridgeMigrations } from '../../../src/bridge/migrations.ts';
import { UsageStore } from '../../../src/bridge/messages/usage.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { openSqlite, transaction } from '../../../src/db/sqlite.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createSim, settle } from '../../helpers/routing.ts';
import type { DeliveryRow } from '../../../src/bridge/engine/rows.ts';

// The cost view (issue 17): GET /api/messages/stats `usage` and /metrics count, per interface
// and UTC day, the frames and bytes delivered deliveries handed to their bearer (after the
// outbound transforms), SMS parts and Iridium credits, measured by the drivers' codecs.

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const ok = (method: string, path: string, body?: unknown) => expectOk(t.call, method, path, body);

/** A delivery of `text` on the interface becomes delivered, as the dispatcher records it: its
 *  event inside the transaction that writes the state. */
function delivered(interfaceId: string, to: string, text: string, finishedAt: string): void {
  const at = finishedAt;
  const d: DeliveryRow = {
    id: `dlv_test${Math.random()}`, message_id: 'msg_test', interface_id: interfaceId, to, channel: null, kind: 'text', text, payload: null, from: '!a1b2c3d4',
    state: 'delivered', precedence: 4, attempts: 1, max_attempts: 5, next_attempt_ms: 0, front_ms: null, expires_ms: 0, last_error: null,
    created_at: at, updated_at: at, finished_at: at,
  };
  const { db, core } = t.bridge.services;
  transaction(db, () => core.events.emit({ type: 'delivery', delivery: d, failedAttempt: false }));
}

test('sim deliveries count frames and bytes after the outbound transforms', async () => {
  await createSim(t.call, 'sim-a', { device: 'sim://usage-a', transforms: { inbound: [], outbound: [{ type: 'split', max_bytes: 20 }] } });
  await createSim(t.call, 'sim-b', { device: 'sim://usage-b' });
  await ok('POST', '/api/access-rules', { name: 'out', match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'sim-a', to: '!1' }, { interface: 'sim-b', to: '!2' }] });
  await settle(20);
  await ok('POST', '/api/messages/send', { to: 'x', text: 'a message of thirty-two bytes...' });
  for (let i = 0; i < 50; i++) {
    await settle(5);
    if ((await ok('GET', '/api/deliveries?state=delivered')).items.length === 2) break;
  }
  const stats = await ok('GET', '/api/messages/stats');
  const row = (name: string) => stats.usage.find((u: any) => u.interface === name);
  // 32 bytes split at 20 bytes a part, numbering "(1/3) " included, at spaces: 3 frames.
  assert.equal([row('sim-a').day, row('sim-a').deliveries, row('sim-a').frames], ['2026-11-27', 1, 3]);
  assert.equal([row('sim-b').deliveries, row('sim-b').frames, row('sim-b').bytes, row('sim-b').sms_parts, row('sim-b').money], [1, 1, 32, 0, null]);
});

test('SMS parts and Iridium credits per day, and the same counters in /metrics', async () => {
  const sms = await ok('POST', '/api/interfaces', { name: 'sms-0', kind: 'sms', settings: {} });
  const sat = await ok('POST', '/api/interfaces', { name: 'sat-0', kind: 'iridium', settings: {} });
  delivered(sms.id, '+4915112345678', 'x'.repeat(200), '2026-11-26T23:59:00.000Z'); // 2 GSM-7 parts
  delivered(sms.id, '+4915112345678', 'ж'.repeat(100), '2026-11-27T08:00:00.000Z'); // UCS-2: 2 parts
  delivered(sms.id, '+4915112345678', 'hi', '2026-11-27T09:00:00.000Z');
  delivered(sat.id, 'gateway', 'y'.repeat(120), '2026-11-27T10:00:00.000Z'); // 120 bytes: 3 credits
  delivered(sat.id, 'RB0001234', 'z'.repeat(41), '2026-11-27T11:00:00.000Z'); // 9 + 41 = 50 bytes: 1 credit
  const usage = (await ok('GET', '/api/messages/stats')).usage.filter((u: any) => u.kind !== 'sim');
  assert.equal(usage.map((u: any) => [u.day, u.interface, u.deliveries, u.frames, u.bytes, u.sms_parts, u.iridium_credits]), [
    ['2026-11-27', 'sms-0', 2, 2, 202, 3, 0],
    ['2026-11-27', 'sat-0', 2, 2, 170, 0, 4],
    ['2026-11-26', 'sms-0', 1, 1, 200, 2, 0],
  ], 'newest day first, then by interface id (sms-0 was made first)');
  const metrics = (await t.call('GET', '/metrics')).text;
  assert.match(metrics, new RegExp(`fieldbridge_sms_parts_total\\{interface="sms-0",interface_id="${sms.id}"\\} 5`));
  assert.match(metrics, new RegExp(`fieldbridge_iridium_credits_total\\{interface="sat-0",interface_id="${sat.id}"\\} 4`));
  assert.match(metrics, new RegExp(`fieldbridge_sent_bytes_total\\{interface="sat-0",interface_id="${sat.id}"\\} 170`));
  assert.match(metrics, /fieldbridge_sent_frames_total\{interface="sim-a",interface_id="[^"]+"\} 3/);
});

test('a write rolled back and replayed counts once, in the table and in /metrics', async () => {
  const sms = await ok('POST', '/api/interfaces', { name: 'sms-replay', kind: 'sms', settings: {} });
  const d: DeliveryRow = {
    id: 'dlv_replay', message_id: 'msg_test', interface_id: sms.id, to: '+4915112345678', channel: null, kind: 'text', text: 'x'.repeat(200), payload: null, from: '!a1b2c3d4',
    state: 'delivered', precedence: 4, attempts: 1, max_attempts: 5, next_attempt_ms: 0, front_ms: null, expires_ms: 0, last_error: null,
    created_at: '2026-11-27T11:00:00.000Z', updated_at: '2026-11-27T11:00:00.000Z', finished_at: '2026-11-27T11:00:00.000Z',
  };
  const { db, core } = t.bridge.services;
  // The first try rolls back after the event (as a write-behind flush that fails), the second commits.
  assert.throws(() => transaction(db, () => {
    core.events.emit({ type: 'delivery', delivery: d, failedAttempt: false });
    throw new Error('rolled back');
  }), /rolled back/);
  // Inside a savepoint that rolls back (a rider, a nested transaction) too.
  transaction(db, () => {
    assert.throws(() => transaction(db, () => {
      core.events.emit({ type: 'delivery', delivery: d, failedAttempt: false });
      throw new Error('savepoint rolled back');
    }));
  });
  transaction(db, () => core.events.emit({ type: 'delivery', delivery: d, failedAttempt: false }));
  const row = (await ok('GET', '/api/messages/stats')).usage.find((u: any) => u.interface === 'sms-replay');
  assert.equal([row.deliveries, row.sms_parts], [1, 2]);
  const metrics = (await t.call('GET', '/metrics')).text;
  assert.match(metrics, new RegExp(`fieldbridge_sms_parts_total\\{interface="sms-replay",interface_id="${sms.id}"\\} 2\n`));
});

test('a database whose usage had a column per unit keeps its counts, now one row per unit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-usage-'));
  const db = openSqlite(join(dir, 'bridge.db'));
  try {
    const byUnit = bridgeMigrations.findIndex((m) => m.name === 'usage_by_unit');
    migrate(db, bridgeMigrations.slice(0, byUnit));
    const insert = db.prepare('INSERT INTO usage_daily (interface_id, day, deliveries, frames, bytes, sms_parts, iridium_credits) VALUES (?, ?, ?, ?, ?, ?, ?)');
    insert.run('if_sms', '2026-11-26', 3, 3, 402, 5, 0);
    insert.run('if_sat', '2026-11-26', 2, 2, 170, 0, 4);
    insert.run('if_sim', '2026-11-27', 1, 3, 32, 0, 0);
    migrate(db, bridgeMigrations);
    assert.equal(new UsageStore(db).list(), [
      { interface_id: 'if_sim', day: '2026-11-27', deliveries: 1, frames: 3, bytes: 32, units: {} },
      { interface_id: 'if_sat', day: '2026-11-26', deliveries: 2, frames: 2, bytes: 170, units: { iridium_credits: 4 } },
      { interface_id: 'if_sms', day: '2026-11-26', deliveries: 3, frames: 3, bytes: 402, units: { sms_parts: 5 } },
    ]);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
