import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 20 acceptance: kill -9 the bridge while 200 fallback lists wait for their first
// member's acknowledgement deadline, restart it after every deadline passed: the next members
// start within seconds, and across the 200 lists no member is started twice (counted in the
// database file itself). Each list is [a sim that never acknowledges, ack_within_s 3; a sim
// that delivers]; 25 silent interfaces take 8 messages each, so every first member is on the
// air (its deadline running) when the process dies.

const SILENT = 25;
const PER_SILENT = 8;
const MESSAGES = SILENT * PER_SILENT;
const ACK_WITHIN_S = 3;

const dir = mkdtempSync(join(tmpdir(), 'fb-fallback-crash-'));
const dbPath = join(dir, 'bridge.db');
let bridge: RestartableBridge;

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 with 200 escalation deadlines pending, restarted after they passed: every next member starts, none twice', async () => {
  bridge = await startBridgeProcess(dbPath);
  await liftSendLimit(bridge.call);
  const created = (path: string, body: unknown) => expectStatus(bridge.call, 201, 'POST', path, body);
  await created('/api/interfaces', { name: 'fb-ok', kind: 'sim', device: 'sim://fb-ok', settings: {} });
  for (let k = 0; k < SILENT; k++) {
    await created('/api/interfaces', { name: `fb-mute-${k}`, kind: 'sim', device: `sim://fb-mute-${k}`, settings: { behaviour: 'never_ack' } });
    await created('/api/access-rules', {
      name: `fb-${k}`, match: { direction: 'outbound', to: [`!fb${String(k).padStart(6, '0')}`] }, schedule: null, action: 'forward',
      destinations: [{ strategy: 'ordered', fallback: [{ interface: `fb-mute-${k}`, to: '{to}', ack_within_s: ACK_WITHIN_S }, { interface: 'fb-ok', to: '{to}' }] }],
    });
  }
  // Sent all at once: one at a time, each would wait for its group's commit (INGEST_GROUP_MS),
  // and the first deadlines would pass before the last message is in.
  const messages: string[] = await Promise.all(Array.from({ length: MESSAGES }, async (_, i) => {
    const r = await expectStatus(bridge.call, 202, 'POST', '/api/messages/send', { to: `!fb${String(i % SILENT).padStart(6, '0')}`, text: `escalate ${i}` });
    assert.is(r.deliveries.length, 1, 'one member at a time');
    return r.message.id as string;
  }));
  // Every first member on the air, its deadline stored.
  await waitUntil('every first member on the air', async () => {
    const s = await expectStatus(bridge.call, 200, 'GET', '/api/deliveries/stats');
    return s.sending === MESSAGES ? s : undefined;
  }, 20_000, 100);
  await bridge.kill();
  const killedAt = Date.now();

  // Restart once every deadline has passed.
  await new Promise((r) => setTimeout(r, (ACK_WITHIN_S + 1) * 1000));
  await bridge.start();
  const restartedAt = Date.now();
  const after = await waitUntil('every list delivered via its second member', async () => {
    const s = await expectStatus(bridge.call, 200, 'GET', '/api/deliveries/stats');
    return s.delivered === MESSAGES ? s : undefined;
  }, 30_000, 100);
  const took = Date.now() - restartedAt;
  assert.ok(took < 15_000, `the next members started and were delivered within seconds of the restart (${took} ms; killed ${restartedAt - killedAt} ms before)`);
  assert.is(after.cancelled, MESSAGES, 'every silent first member was escalated away');

  const sample = (await expectStatus(bridge.call, 200, 'GET', `/api/deliveries/message/${messages[0]}`));
  assert.match(sample.fallbacks[0].outcome, new RegExp(`^delivered via fb-ok after fb-mute-0 timed out at ${ACK_WITHIN_S} s$`));

  assert.is(await bridge.stop(), 0);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const perList = db.prepare('SELECT fallback_id, fallback_pos, count(*) AS n FROM deliveries GROUP BY fallback_id, fallback_pos').all() as Array<{ fallback_id: string; fallback_pos: number; n: number }>;
    assert.is(perList.length, MESSAGES * 2, 'two members started per list');
    assert.ok(perList.every((r) => r.n === 1), `no member started twice: ${JSON.stringify(perList.filter((r) => r.n !== 1).slice(0, 3))}`);
    const lists = db.prepare('SELECT state, position FROM fallbacks').all() as Array<{ state: string; position: number }>;
    assert.is(lists.length, MESSAGES);
    assert.ok(lists.every((l) => l.state === 'delivered' && l.position === 1));
  } finally {
    db.close();
  }
});

test.run();
