import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 4 acceptance: kill -9 the bridge with 1,000 deliveries pending, restart it on the same
// database, and every delivery reaches a final state with none missing (docs/design.md section 6:
// at least once, never lost). The deliveries are counted three ways: the ids the API gave
// out when the messages were sent, the API after the restart, and the database file itself.

const MESSAGES = 100;
// Each message fans out to 4 + 3 + 3 addresses on three interfaces: 10 deliveries a message.
const GROUPS = { four: 4, 'three-b': 3, 'three-c': 3 };
const PER_MESSAGE = 10;
const TOTAL = MESSAGES * PER_MESSAGE;
// Slow enough that most deliveries are still queued or in flight at the kill, fast enough that
// the three queues (about 330 each) drain in seconds after the restart.
const LATENCY_MS = 25;

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const dbPath = join(dir, 'bridge.db');
let bridge: RestartableBridge;

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 with 1,000 deliveries pending: after a restart every one reaches a final state and none is missing', async () => {
  bridge = await startBridgeProcess(dbPath);
  await liftSendLimit(bridge.call);
  const ok = (method: string, path: string, body?: unknown) => expectStatus(bridge.call, 200, method, path, body);
  const created = (path: string, body: unknown) => expectStatus(bridge.call, 201, 'POST', path, body);

  // Each interface on its own channel, so no interface hears the others' frames.
  for (const name of ['crash-a', 'crash-b', 'crash-c']) {
    await created('/api/interfaces', { name, kind: 'sim', device: `sim://${name}`, settings: { latency_ms: LATENCY_MS } });
  }
  for (const [name, size] of Object.entries(GROUPS)) {
    await created('/api/object-groups', { name, members: Array.from({ length: size }, (_, i) => `!${name.slice(0, 1)}${String(i).padStart(7, '0')}`) });
  }
  await created('/api/access-rules', {
    name: 'fan-ten', match: { direction: 'outbound', to: ['!crash000'] }, schedule: null, action: 'forward',
    destinations: [{ interface: 'crash-a', to: '@four' }, { interface: 'crash-b', to: '@three-b' }, { interface: 'crash-c', to: '@three-c' }],
  });

  // Sent all at once: one at a time, each would wait for its group's commit (INGEST_GROUP_MS),
  // and most deliveries would be out before the last message is in.
  const given = new Map<string, string[]>();
  await Promise.all(Array.from({ length: MESSAGES }, async (_, i) => {
    const r = await expectStatus(bridge.call, 202, 'POST', '/api/messages/send', { to: '!crash000', text: `crash ${i}` });
    assert.is(r.deliveries.length, PER_MESSAGE, `message ${i} fans out to ${PER_MESSAGE}`);
    given.set(r.message.id, r.deliveries.map((d: any) => d.id));
  }));
  const allIds = [...given.values()].flat();
  assert.is(new Set(allIds).size, TOTAL, '1,000 distinct deliveries created');

  const before = await ok('GET', '/api/deliveries/stats');
  const unfinished = before.pending + before.sending + before.retrying;
  assert.ok(unfinished >= TOTAL / 2, `most deliveries still pending at the kill: ${JSON.stringify(before)}`);
  await bridge.kill();

  await bridge.start();
  const recovered = await bridge.process.waitFor('deliveries_recovered');
  // One delivery per interface was in the middle of its send when the process died.
  assert.ok(recovered.count >= 1 && recovered.count <= 3, `recovered ${recovered.count}`);

  const after = await waitUntil('every delivery to reach a final state', async () => {
    const s = await ok('GET', '/api/deliveries/stats');
    return s.pending + s.sending + s.retrying === 0 ? s : undefined;
  }, 45_000, 200);
  assert.is(after.delivered, TOTAL, `all delivered: ${JSON.stringify(after)}`);
  assert.is(after.dead + after.cancelled + after.expired, 0);

  // Each message's deliveries are all there, the very ids handed out before the kill.
  for (const [messageId, ids] of given) {
    const items = (await ok('GET', `/api/deliveries/message/${messageId}`)).items;
    assert.equal(items.map((d: any) => d.id).sort(), [...ids].sort(), `deliveries of ${messageId}`);
    assert.ok(items.every((d: any) => d.state === 'delivered' && d.finished_at !== null));
  }

  assert.is(await bridge.stop(), 0);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const rows = db.prepare('SELECT id, state, attempts FROM deliveries').all() as Array<{ id: string; state: string; attempts: number }>;
    assert.is(rows.length, TOTAL, 'exactly 1,000 rows: none lost, none doubled');
    const stored = new Set(rows.map((r) => r.id));
    assert.ok(allIds.every((id) => stored.has(id)), 'every id given out is in the database');
    assert.ok(rows.every((r) => r.state === 'delivered'));
    // The ones cut off mid-send were sent again: at least once.
    assert.is(rows.filter((r) => r.attempts === 2).length, recovered.count);
    assert.ok(rows.every((r) => r.attempts === 1 || r.attempts === 2));
    assert.is((db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n, MESSAGES);
  } finally {
    db.close();
  }
});

test.run();
