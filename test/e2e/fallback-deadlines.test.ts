import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 30 acceptance: 40 messages to the ordered list [a sim that never acknowledges,
// ack_within_s 6; a sim that acknowledges] are all delivered through the second member within
// 15 s of their deadline, with and without a kill -9 in between, and no member is started
// twice. The silent sim takes 8 sends at once, so 32 first members wait in its queue: their
// deadline runs all the same. A third sim listens on the silent one's channel and counts what
// really went on the air. The real process, its database file read at the end.

const MESSAGES = 40;
const ACK_WITHIN_S = 6;
const SLACK_MS = 15_000;

const dir = mkdtempSync(join(tmpdir(), 'fb-fallback-deadlines-'));
const dbPath = join(dir, 'bridge.db');
let bridge: RestartableBridge;

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const created = (path: string, body: unknown) => expectStatus(bridge.call, 201, 'POST', path, body);
const stats = () => expectStatus(bridge.call, 200, 'GET', '/api/deliveries/stats');
/** Frames the listening sim heard on the silent sim's channel. */
const heard = async (ear: string) => (await expectStatus(bridge.call, 200, 'GET', `/api/messages?interface=${ear}&limit=1000`)).items.length as number;

/** A silent and an acknowledging sim, a listener on the silent one's channel, and a rule that
 *  sends `to` through the ordered list [silent, 6 s; acknowledging]. */
async function setUp(tag: string): Promise<string> {
  await created('/api/interfaces', { name: `mute-${tag}`, kind: 'sim', device: `sim://fdl-mute-${tag}`, settings: { behaviour: 'never_ack' } });
  await created('/api/interfaces', { name: `ear-${tag}`, kind: 'sim', device: `sim://fdl-mute-${tag}`, settings: {} });
  await created('/api/interfaces', { name: `ok-${tag}`, kind: 'sim', device: `sim://fdl-ok-${tag}`, settings: { behaviour: 'ack_after', ack_ms: 200 } });
  const to = `!fdl-${tag}`;
  await created('/api/access-rules', {
    name: `fdl-${tag}`, match: { direction: 'outbound', to: [to] }, schedule: null, action: 'forward',
    destinations: [{ strategy: 'ordered', fallback: [{ interface: `mute-${tag}`, to: '{to}', ack_within_s: ACK_WITHIN_S }, { interface: `ok-${tag}`, to: '{to}' }] }],
  });
  return to;
}

/** Sent all at once, as a burst of alerts would come. */
async function sendAll(to: string): Promise<string[]> {
  return Promise.all(Array.from({ length: MESSAGES }, async (_, i) => {
    const r = await expectStatus(bridge.call, 202, 'POST', '/api/messages/send', { to, text: `alert ${i}` });
    assert.is(r.deliveries.length, 1, 'one member at a time');
    return r.message.id as string;
  }));
}

async function untilOnAir(tag: string): Promise<void> {
  await waitUntil(`8 first members on the air on mute-${tag}, the rest queued`, async () => {
    const page = await expectStatus(bridge.call, 200, 'GET', `/api/deliveries?state=sending&interface=mute-${tag}`);
    return page.items.length === 8;
  }, 20_000, 50);
}

async function untilDelivered(count: number): Promise<void> {
  await waitUntil(`${count} deliveries delivered`, async () => (await stats()).delivered === count, 40_000, 200);
}

interface Measured { lateMs: number[]; earlyMs: number[]; startedTwice: string[]; firstAttempts: number[]; aired: number; states: string[] }

/** From the database file: each list's deadline (6 s after its first member was chosen), when
 *  its second member started and was delivered, and how often each member was started. */
function measure(db: DatabaseSync, tag: string): Measured {
  const lists = db.prepare(`SELECT f.id, f.created_at, f.state, f.trace FROM fallbacks f JOIN messages m ON m.id = f.message_id WHERE m.to_addr = ?`).all(`!fdl-${tag}`) as Array<{ id: string; created_at: string; state: string; trace: string }>;
  assert.is(lists.length, MESSAGES);
  const out: Measured = { lateMs: [], earlyMs: [], startedTwice: [], firstAttempts: [], aired: 0, states: [] };
  for (const list of lists) {
    out.states.push(list.state);
    const deadline = Date.parse(list.created_at) + ACK_WITHIN_S * 1000;
    const members = db.prepare('SELECT fallback_pos, attempts, state, created_at, finished_at FROM deliveries WHERE fallback_id = ? ORDER BY fallback_pos').all(list.id) as Array<{ fallback_pos: number; attempts: number; state: string; created_at: string; finished_at: string | null }>;
    const trace = JSON.parse(list.trace) as Array<{ member: number; event: string }>;
    for (const pos of [0, 1]) {
      const rows = members.filter((m) => m.fallback_pos === pos).length;
      const starts = trace.filter((e) => e.member === pos && e.event === 'started').length;
      if (rows !== 1 || starts !== 1) out.startedTwice.push(`${list.id} member ${pos}: ${rows} deliveries, ${starts} starts`);
    }
    const [first, second] = members;
    out.firstAttempts.push(first.attempts);
    if (second?.state === 'delivered' && second.finished_at) out.lateMs.push(Date.parse(second.finished_at) - deadline);
    if (second) out.earlyMs.push(deadline - Date.parse(second.created_at));
  }
  return out;
}

test('40 messages to [silent sim, 6 s; acknowledging sim]: all delivered through the second within 15 s of their deadline, with and without kill -9, no member started twice', async () => {
  bridge = await startBridgeProcess(dbPath);
  await liftSendLimit(bridge.call);

  // Without a kill.
  const toA = await setUp('a');
  const sentA = await sendAll(toA);
  await untilOnAir('a');
  await untilDelivered(MESSAGES);
  const sample = await expectStatus(bridge.call, 200, 'GET', `/api/deliveries/message/${sentA[MESSAGES - 1]}`);
  assert.match(sample.fallbacks[0].outcome, /^delivered via ok-a after mute-a (timed out at 6 s|not started within 6 s: the interface was busy with other sends \(\d+ on the air, \d+ more waiting\))$/);
  const heardA = await heard('ear-a');

  // With a kill -9 while 8 first members are on the air and 32 queued, restarted once every
  // deadline has passed.
  const toB = await setUp('b');
  await sendAll(toB);
  await untilOnAir('b');
  const heardBeforeKill = await heard('ear-b');
  assert.is(heardBeforeKill, 8, 'the 8 on the air were heard');
  await bridge.kill();
  await new Promise((r) => setTimeout(r, (ACK_WITHIN_S + 1) * 1000));
  await bridge.start();
  await untilDelivered(2 * MESSAGES);
  // A moment for any frame the restart might still put on the air.
  await new Promise((r) => setTimeout(r, 1000));
  assert.is(await heard('ear-b'), heardBeforeKill, 'nothing went on the air again on mute-b after the restart');

  assert.is(await bridge.stop(), 0);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    for (const [tag, aired] of [['a', heardA], ['b', heardBeforeKill]] as const) {
      const m = measure(db, tag);
      assert.ok(m.states.every((s) => s === 'delivered'), `${tag}: every list delivered`);
      assert.is(m.lateMs.length, MESSAGES, `${tag}: every second member delivered`);
      assert.equal(m.startedTwice, [], `${tag}: no member started twice`);
      assert.ok(m.firstAttempts.every((a) => a <= 1), `${tag}: no first member sent twice: ${m.firstAttempts.join(',')}`);
      // What went on the air on the silent sim: one frame per first member at most.
      assert.ok(aired <= MESSAGES && aired >= 8, `${tag}: ${aired} frames heard`);
      const worst = Math.max(...m.lateMs);
      assert.ok(worst <= SLACK_MS, `${tag}: delivered within ${SLACK_MS} ms of the deadline (worst ${worst} ms)`);
      assert.ok(m.earlyMs.every((e) => e <= 0), `${tag}: no second member started before its deadline (${Math.max(...m.earlyMs)} ms early)`);
    }
  } finally {
    db.close();
  }
});

test.run();
