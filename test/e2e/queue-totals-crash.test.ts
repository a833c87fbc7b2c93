import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess } from '../helpers/api.ts';

// A queue filled past its caps with every precedence, the bridge killed (kill -9) at random
// points while messages are coming in: after every restart the running totals the caps are
// checked against equal a fresh count of the deliveries, and every delivery that
// was admitted, evicted or refused is exactly what docs/routing.md, "Bounded queues", says for
// the messages the database holds, replayed in the order they were stored.

const CAP_COUNT = 30;
const CAP_BYTES = 2048;
const ROUNDS = 5;
const IN_FLIGHT = 8;
const TO = '!deep0000';
const PRECEDENCES = ['override', 'flash', 'immediate', 'priority', 'routine', 'deferred'] as const;
/** Weights of the precedences above: mostly routine and priority, a few that are never evicted. */
const WEIGHTS = [1, 2, 3, 4, 6, 3];

const seed = Number(process.env.TEST_SEED ?? Date.now() % 1_000_000);
/** mulberry32: the same seed replays the same sends and kill points. */
let state = seed;
function random(): number {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function pickPrecedence(): (typeof PRECEDENCES)[number] {
  let r = random() * WEIGHTS.reduce((a, b) => a + b, 0);
  for (let i = 0; i < WEIGHTS.length; i++) if ((r -= WEIGHTS[i]) < 0) return PRECEDENCES[i];
  return 'routine';
}

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const dbPath = join(dir, 'bridge.db');
let bridge: RestartableBridge;

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends messages 8 at a time and kills the bridge once `killAfter` were acknowledged, with the
 *  others still in flight (they may or may not have been stored). */
/** `count` sends, 8 in flight, each answered: the totals then have been kept through them. */
async function sendSome(count: number): Promise<number> {
  let left = count;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) {
        const text = 'x'.repeat(1 + Math.floor(random() * 120));
        const r = await bridge.call('POST', '/api/messages/send', { body: { to: TO, text, precedence: pickPrecedence() } });
        assert.is(r.status, 202, r.text);
      }
    }),
  );
  return count;
}

async function sendUntilKilled(killAfter: number): Promise<number> {
  let acknowledged = 0;
  let killing: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (!killing) {
        const text = 'x'.repeat(1 + Math.floor(random() * 120));
        const r = await bridge.call('POST', '/api/messages/send', { body: { to: TO, text, precedence: pickPrecedence() } }).catch(() => undefined);
        if (r === undefined || killing) return;
        assert.is(r.status, 202, r.text);
        if (++acknowledged >= killAfter) killing = bridge.kill();
      }
    }),
  );
  await killing;
  return acknowledged;
}

type Waiting = { messageId: string; rank: number; size: number };

/** Replays the stored messages through the rule of docs/routing.md and compares each with what
 *  the database holds for it. Answers how many evictions and refusals the replay made. */
function checkAgainstTheRule(db: DatabaseSync, interfaceId: string): { evicted: number; refused: number } {
  const messages = db.prepare('SELECT id, text, decision FROM messages WHERE to_addr = ? ORDER BY id').all(TO) as Array<{ id: string; text: string; decision: string }>;
  const deliveries = new Map(
    (db.prepare('SELECT message_id, precedence, size, state, last_error FROM deliveries WHERE interface_id = ?').all(interfaceId) as Array<{ message_id: string; precedence: number; size: number; state: string; last_error: string | null }>).map((d) => [d.message_id, d]),
  );
  const queue: Waiting[] = [];
  const evictedBy = new Map<string, string>();
  let refused = 0;
  for (const m of messages) {
    const decision = JSON.parse(m.decision) as { precedence: string; reason: string };
    const rank = PRECEDENCES.indexOf(decision.precedence as (typeof PRECEDENCES)[number]);
    const size = Buffer.byteLength(m.text);
    let admitted = true;
    for (;;) {
      const overCount = queue.length + 1 > CAP_COUNT;
      const overBytes = queue.reduce((a, w) => a + w.size, 0) + size > CAP_BYTES;
      if (!overCount && !overBytes) break;
      // The lowest precedence, then the oldest; never override (0) or flash (1).
      const candidates = queue.filter((w) => w.rank > 1);
      const victim = candidates.reduce<Waiting | undefined>((v, w) => (v === undefined || w.rank > v.rank ? w : v), undefined);
      if (!victim || victim.rank < rank) {
        admitted = false;
        break;
      }
      queue.splice(queue.indexOf(victim), 1);
      evictedBy.set(victim.messageId, `evicted: queue full (${overCount ? `cap ${CAP_COUNT}` : `cap ${CAP_BYTES} bytes`}) by message ${m.id}`);
    }
    const d = deliveries.get(m.id);
    if (!admitted) {
      refused++;
      assert.is(d, undefined, `message ${m.id} (${decision.precedence}) was refused: no delivery (seed ${seed})`);
      assert.match(decision.reason, 'so this delivery was refused', `the refusal is in the decision of ${m.id}`);
      continue;
    }
    assert.ok(d, `message ${m.id} (${decision.precedence}) was admitted: it has a delivery (seed ${seed})`);
    assert.is(d!.precedence, rank);
    queue.push({ messageId: m.id, rank, size });
  }
  for (const [messageId, why] of evictedBy) {
    const d = deliveries.get(messageId)!;
    assert.is(d.state, 'dead', `message ${messageId}'s delivery was evicted (seed ${seed})`);
    assert.is(d.last_error, why, `message ${messageId}'s eviction and its reason (seed ${seed})`);
  }
  const waiting = [...deliveries].filter(([, d]) => ['pending', 'held', 'retrying'].includes(d.state)).map(([id]) => id).sort();
  assert.equal(waiting, queue.map((w) => w.messageId).sort(), `what waits is what the rule leaves (seed ${seed})`);
  return { evicted: evictedBy.size, refused };
}

/** The running totals (the bridge's, read through health's queue_depth) against a fresh count
 *  of the deliveries in the database file. */
async function checkTotals(interfaceId: string): Promise<void> {
  const db = new DatabaseSync(dbPath, { readOnly: true });
  let fresh: { count: number; bytes: number; sending: number };
  try {
    fresh = db.prepare("SELECT count(*) FILTER (WHERE state IN ('pending', 'held', 'retrying')) AS count, coalesce(sum(size) FILTER (WHERE state IN ('pending', 'held', 'retrying')), 0) AS bytes, count(*) FILTER (WHERE state = 'sending') AS sending FROM deliveries WHERE interface_id = ?").get(interfaceId) as typeof fresh;
    assert.ok(fresh.count <= CAP_COUNT && fresh.bytes <= CAP_BYTES, `within the caps: ${JSON.stringify(fresh)}`);
  } finally {
    db.close();
  }
  // Health's queue_depth is read from the totals, queue.by_precedence counted from the index.
  const health = (await expectStatus(bridge.call, 200, 'GET', '/api/interfaces/health')).items.find((i: any) => i.id === interfaceId);
  assert.is(health.queue_depth, fresh.count + fresh.sending, `running totals against a fresh count (seed ${seed})`);
  const byPrecedence = Object.values(health.queue.by_precedence as Record<string, number>).reduce((a, b) => a + b, 0);
  assert.is(health.queue_depth, byPrecedence, `health's queue depth against its count by precedence (seed ${seed})`);
}

test('a queue past its caps, killed at random points: the totals equal a fresh count after every restart and after more sends, and evictions follow the precedence rule', async () => {
  bridge = await startBridgeProcess(dbPath);
  await liftSendLimit(bridge.call);
  // Disabled: everything admitted waits (held), so the queue stays at its caps.
  const iface = await expectStatus(bridge.call, 201, 'POST', '/api/interfaces', {
    name: 'deep', kind: 'sim', device: 'sim://deep', enabled: false, settings: {}, retry: { queue_max_deliveries: CAP_COUNT, queue_max_bytes: CAP_BYTES },
  });
  await expectStatus(bridge.call, 201, 'POST', '/api/access-rules', {
    name: 'to-deep', match: { direction: 'outbound', to: [TO] }, schedule: null, action: 'forward', destinations: [{ interface: 'deep', to: '{to}' }],
  });
  let sent = 0;
  let evicted = 0;
  let refused = 0;
  for (let round = 0; round < ROUNDS; round++) {
    sent += await sendUntilKilled(10 + Math.floor(random() * 50));
    await bridge.start();
    await checkTotals(iface.id);
    // Kept through admissions and evictions since the start, not only counted at it.
    sent += await sendSome(10 + Math.floor(random() * 30));
    await checkTotals(iface.id);
    const db = new DatabaseSync(dbPath, { readOnly: true });
    try {
      ({ evicted, refused } = checkAgainstTheRule(db, iface.id));
    } finally {
      db.close();
    }
  }
  // The run must have reached what it tests: a full queue that evicted and refused.
  assert.ok(sent > CAP_COUNT * 2, `${sent} messages acknowledged`);
  assert.ok(evicted > 10, `${evicted} evictions (seed ${seed})`);
  assert.ok(refused > 0, `${refused} refusals (seed ${seed})`);
});

test.run();
