import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { simChannels, type SimListener } from '../../src/bearers/sim/channels.ts';
import { HeldFrame, MAX_HELD_FRAMES } from '../../src/bridge/engine/held-frames.ts';
import { SmsModem } from '../../src/bearers/sms/simulator/modem.ts';
import { SmsNetwork } from '../../src/bearers/sms/simulator/network.ts';
import { serveSmsTcp } from '../../src/bearers/sms/simulator/serve.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { holdLock } from '../helpers/db-lock.ts';
import { createRule } from '../helpers/routing.ts';

// Issue 14, item 7: while another process holds the database's write lock, the bridge keeps
// running. SQLite's busy wait stops the whole event loop (node:sqlite is synchronous), so the
// bridge waits at most a slice inside SQLite and the rest on timers (src/db/busy.ts): changes
// sent through the API wait for the lock and are then saved once, frames heard meanwhile wait in
// memory in order, node reports and driver state wait in a queue of writes.

/** The longest the event loop went without running a 20 ms interval, while `during` runs. */
async function longestStall(during: () => Promise<void>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 20);
  try {
    await during();
  } finally {
    clearInterval(timer);
  }
  return Math.max(longest, performance.now() - last);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function simInterface(t: TestBridge, name: string, channel: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await t.call('POST', '/api/interfaces', { body: { name, kind: 'sim', device: `sim://${channel}`, enabled: true, ...extra } });
  assert.is(r.status, 201, r.text);
  for (let i = 0; i < 100 && !(await t.call('GET', `/api/interfaces/${r.body.id}`)).body.state?.connected; i++) await sleep(20);
  return r.body.id as string;
}

test('a change sent while another process holds the lock waits off the event loop, and is saved once when the lock is free', async () => {
  const t = await startTestBridge();
  try {
    await t.call('GET', '/api/contacts'); // the key's last use is written before the lock
    const lock = await holdLock(t.dbPath);
    let answered = false;
    const stall = await longestStall(async () => {
      const post = t.call('POST', '/api/contacts', { body: { name: 'during-lock', addresses: { sms: '+4917012345678' } } }).then((r) => {
        answered = true;
        return r;
      });
      await sleep(300);
      // Meanwhile the bridge answers: health at once with "busy", reads from what is committed.
      const health = await t.call('GET', '/api/health', { key: null });
      assert.is(health.status, 503, health.text);
      assert.is(health.body.db, 'busy');
      assert.is((await t.call('GET', '/api/contacts')).status, 200);
      assert.not.ok(answered, 'the change waits for the lock');
      await sleep(1000);
      assert.not.ok(answered, 'still waiting, well under 5 s');
      await lock.release();
      const r = await post;
      assert.is(r.status, 201, r.text);
    });
    // Before: the first write froze the loop for up to 5 s (SQLite's busy wait). Now a slice.
    assert.ok(stall < 1000, `the event loop stalled ${Math.round(stall)} ms`);
    const list = await t.call('GET', '/api/contacts');
    assert.is(list.body.items.filter((c: { name: string }) => c.name === 'during-lock').length, 1, list.text);
  } finally {
    await t.stop();
  }
});

test('a change that meets a lock held past 5 s answers 503 db-busy and saves nothing; the bridge served others meanwhile', async () => {
  const t = await startTestBridge();
  try {
    await t.call('GET', '/api/contacts');
    const lock = await holdLock(t.dbPath);
    let r: Awaited<ReturnType<typeof t.call>> | undefined;
    let healthDuringWait = 0;
    const stall = await longestStall(async () => {
      const post = t.call('POST', '/api/contacts', { body: { name: 'too-late', addresses: { sms: '+4917012345679' } } });
      // While the change waits, health keeps answering (busy).
      for (let i = 0; i < 8; i++) {
        await sleep(400);
        if ((await t.call('GET', '/api/health', { key: null })).body.db === 'busy') healthDuringWait++;
      }
      r = await post;
    });
    await lock.release();
    assert.is(r!.status, 503, r!.text);
    assert.is(r!.body.type, 'https://fieldbridge.dev/problems/db-busy');
    assert.is(r!.headers.get('retry-after'), '1');
    assert.ok(healthDuringWait >= 7, `health answered ${healthDuringWait} of 8 times during the wait`);
    assert.ok(stall < 1000, `the event loop stalled ${Math.round(stall)} ms`);
    const list = await t.call('GET', '/api/contacts');
    assert.is(list.status, 200, list.text);
    assert.not.ok(list.body.items.some((c: { name: string }) => c.name === 'too-late'), 'nothing was saved');
  } finally {
    await t.stop();
  }
});

test('frames heard while the lock is held wait in memory, in order, and are stored once the lock is free; the link stays up', async () => {
  const t = await startTestBridge();
  try {
    const id = await simInterface(t, 'radio', 'busy-rx');
    const peer: SimListener = { interfaceId: 'peer', hear: () => {} };
    simChannels.join('busy-rx', peer);
    const lock = await holdLock(t.dbPath);
    const stall = await longestStall(async () => {
      for (let i = 0; i < 20; i++) simChannels.broadcast('busy-rx', peer, { from: '!0000beef', to: null, channel: 0, kind: 'text', text: `held ${i}`, payload: null, meta: {} });
      await sleep(500);
      assert.is(t.bridge.services.core.held.waiting, 20, 'the frames wait');
      const state = await t.call('GET', `/api/interfaces/${id}`);
      assert.is(state.body.state.connected, true, 'the bearer is still up');
      await lock.release();
      for (let i = 0; i < 100 && t.bridge.services.core.held.waiting > 0; i++) await sleep(20);
    });
    assert.ok(stall < 1000, `the event loop stalled ${Math.round(stall)} ms`);
    const messages = await t.call('GET', `/api/messages?interface=${id}&limit=100`);
    assert.is(messages.status, 200, messages.text);
    const texts = messages.body.items.map((m: { text: string }) => m.text).reverse();
    assert.equal(texts, Array.from({ length: 20 }, (_, i) => `held ${i}`), 'each stored once, in the order heard');
    assert.is(t.bridge.services.core.held.counters.held, 20);
    assert.ok(t.logs.some((l) => /"event":"frames_held"/.test(l)));
    simChannels.leave('busy-rx', peer);
  } finally {
    await t.stop();
  }
});

test('under a held lock, a device that keeps its frames (SMS, Iridium) is told "not stored"; memory holds at most MAX_HELD_FRAMES', async () => {
  const t = await startTestBridge();
  try {
    const id = await simInterface(t, 'radio', 'busy-keep');
    const { held } = t.bridge.services.core;
    const frame = (text: string) => ({ from: '+4917000000001', to: null, channel: null, kind: 'text' as const, text, payload: null, meta: {} });
    const lock = await holdLock(t.dbPath);
    const answers: HeldFrame[] = [];
    try {
      assert.is(held.receive(id, frame('kept on the SIM'), true), false, 'the SMS stays on the SIM');
      for (let i = 0; i < MAX_HELD_FRAMES; i++) {
        const answer = held.receive(id, frame(`radio ${i}`), false);
        assert.instance(answer, HeldFrame);
        answers.push(answer as HeldFrame);
      }
      assert.is(held.receive(id, frame('one too many'), false), false, 'refused once memory is full');
      assert.is(held.counters.overflow, 1);
      assert.ok(t.logs.some((l) => /"event":"held_frames_overflow"/.test(l)));
    } finally {
      await lock.release();
    }
    for (let i = 0; i < 200 && held.waiting > 0; i++) await sleep(20);
    assert.is(held.waiting, 0);
    assert.ok((await Promise.all(answers.map((a) => a.stored))).every((stored) => stored), 'each held frame is answered "stored" once it is on disk');
    const stats = await t.call('GET', '/api/messages/stats');
    assert.is(stats.body.total, MAX_HELD_FRAMES, stats.text);
  } finally {
    await t.stop();
  }
});

test('driver state and node reports written under a held lock wait, reads see the new value, and both are written after', async () => {
  const t = await startTestBridge();
  try {
    const id = await simInterface(t, 'radio', 'busy-state');
    const { driverState, deferred, nodes } = t.bridge.services.core;
    const lock = await holdLock(t.dbPath);
    try {
      driverState.set(id, 'identity', 'v1', new Date().toISOString());
      deferred.run(() => nodes.upsert(id, { id: '!0000cafe', long_name: 'Held Node' }, new Date().toISOString()));
      assert.is(deferred.waiting, 2, 'both wait for the lock');
      assert.is(driverState.get(id, 'identity'), 'v1', 'a driver reads what it wrote');
    } finally {
      await lock.release();
    }
    for (let i = 0; i < 100 && deferred.waiting > 0; i++) await sleep(20);
    assert.is(deferred.waiting, 0);
    const row = t.bridge.services.db.prepare('SELECT value FROM driver_state WHERE interface_id = ? AND key = ?').get(id, 'identity') as { value: string } | undefined;
    assert.is(row?.value, 'v1');
    const node = await t.call('GET', '/api/nodes/!0000cafe');
    assert.is(node.status, 200, node.text);
    assert.is(node.body.long_name, 'Held Node');
  } finally {
    await t.stop();
  }
});


test('a frame an inbound transform splits is stored whole or not at all: under the lock every part waits, after it every part is stored once', async () => {
  const t = await startTestBridge();
  try {
    const id = await simInterface(t, 'radio', 'busy-split', { transforms: { inbound: [{ type: 'split', max_bytes: 20 }], outbound: [] } });
    const peer: SimListener = { interfaceId: 'peer', hear: () => {} };
    simChannels.join('busy-split', peer);
    const text = 'a long report from the ridge that needs several parts';
    const lock = await holdLock(t.dbPath);
    simChannels.broadcast('busy-split', peer, { from: '!0000beef', to: null, channel: 0, kind: 'text', text, payload: null, meta: {}, dedupeKey: 'split-1' });
    assert.is((await t.call('GET', '/api/messages/stats')).body.total, 0, 'no part is stored while the lock is held');
    await lock.release();
    for (let i = 0; i < 100 && t.bridge.services.core.held.waiting > 0; i++) await sleep(20);
    const messages = await t.call('GET', `/api/messages?interface=${id}&limit=100`);
    const parts = messages.body.items.map((m: { text: string }) => m.text).reverse();
    assert.ok(parts.length >= 3, messages.text);
    assert.ok(parts.every((p: string, i: number) => p.startsWith(`(${i + 1}/${parts.length}) `)), `each part once, in order: ${JSON.stringify(parts)}`);
    // The same frame again is a duplicate: nothing more is stored.
    simChannels.broadcast('busy-split', peer, { from: '!0000beef', to: null, channel: 0, kind: 'text', text, payload: null, meta: {}, dedupeKey: 'split-1' });
    assert.is((await t.call('GET', '/api/messages/stats')).body.total, parts.length);
    simChannels.leave('busy-split', peer);
  } finally {
    await t.stop();
  }
});

test('a driver state write queued under the lock does not bring the state back after the interface is deleted', async () => {
  const t = await startTestBridge();
  try {
    const id = await simInterface(t, 'radio', 'busy-forget');
    const { driverState, deferred } = t.bridge.services.core;
    const lock = await holdLock(t.dbPath);
    try {
      driverState.set(id, 'identity', 'secret', new Date().toISOString());
      t.bridge.services.host.forget(id); // what deleting the interface does, after its bearer stopped
      assert.is(driverState.get(id, 'identity'), null, 'forgotten at once');
    } finally {
      await lock.release();
    }
    for (let i = 0; i < 100 && deferred.waiting > 0; i++) await sleep(20);
    const rows = t.bridge.services.db.prepare('SELECT count(*) AS n FROM driver_state WHERE interface_id = ?').get(id) as { n: number };
    assert.is(rows.n, 0);
  } finally {
    await t.stop();
  }
});

test('memory overflow is reported in every episode of the lock, and counted in /metrics', async () => {
  const t = await startTestBridge();
  try {
    const id = await simInterface(t, 'radio', 'busy-episodes');
    const { held } = t.bridge.services.core;
    const frame = (text: string) => ({ from: '!00000001', to: null, channel: null, kind: 'text' as const, text, payload: null, meta: {} });
    for (let episode = 0; episode < 2; episode++) {
      const lock = await holdLock(t.dbPath);
      for (let i = 0; i <= MAX_HELD_FRAMES; i++) held.receive(id, frame(`e${episode} ${i}`));
      const metrics = await t.call('GET', '/metrics');
      assert.match(metrics.text, /fieldbridge_lock_waiting\{what="frames"\} 1000/);
      assert.match(metrics.text, new RegExp(`fieldbridge_lock_lost\\{what="frames"\\} ${episode + 1}`));
      await lock.release();
      for (let i = 0; i < 200 && held.waiting > 0; i++) await sleep(20);
    }
    assert.is(t.logs.filter((l) => /"event":"held_frames_overflow"/.test(l)).length, 2, 'one error per episode');
  } finally {
    await t.stop();
  }
});

test('a link that flaps under the lock is retried once a second, not once per flap, and reads of the delivery store do not stall', async () => {
  const t = await startTestBridge();
  try {
    // The bearer takes 300 ms, longer than the message's own group of ingests waits to commit
    // (INGEST_GROUP_MS), so its delivered state does not ride that commit.
    const id = await simInterface(t, 'radio', 'busy-flap', { settings: { latency_ms: 300 } });
    // A delivered message leaves its final state waiting for the group commit (up to 1 s);
    // the lock is taken while it waits, so reads find a write-behind that cannot flush.
    await createRule(t.call, 'out', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'radio', to: '{to}' }] });
    const sent = await t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text: 'before the lock' } });
    assert.is(sent.status, 202, sent.text);
    const { writeBehind } = t.bridge.services.core;
    for (let i = 0; i < 200 && writeBehind.dirtyIds().length === 0; i++) await sleep(5);
    const lock = await holdLock(t.dbPath);
    assert.ok(writeBehind.dirtyIds().length > 0, 'a delivery state waits in memory under the lock');
    const bearer = simChannels.running(id)!;
    const stall = await longestStall(async () => {
      for (let i = 0; i < 8; i++) {
        bearer.setLink(i % 2 === 1);
        await sleep(30);
      }
      for (let i = 0; i < 5; i++) {
        assert.is((await t.call('GET', '/api/interfaces/health')).status, 200);
        assert.is((await t.call('GET', '/metrics')).status, 200);
      }
      await sleep(1500);
    });
    await lock.release();
    bearer.setLink(true);
    assert.ok(stall < 400, `the event loop stalled ${Math.round(stall)} ms`);
    const retries = t.logs.filter((l) => /"event":"link_change_failed"/.test(l)).length;
    assert.ok(retries >= 1 && retries <= 3, `${retries} link retries logged for 8 flaps in about 2 s`);
    // After the lock, the link's last state holds: the interface is up and its queue released.
    for (let i = 0; i < 100 && !(await t.call('GET', `/api/interfaces/${id}`)).body.state.connected; i++) await sleep(20);
    assert.ok((await t.call('GET', `/api/interfaces/${id}`)).body.state.connected);
  } finally {
    await t.stop();
  }
});


test('an SMS that arrives under the lock stays on the SIM (the driver is told "not stored") and is stored once after it', async () => {
  const network = new SmsNetwork();
  const modem = new SmsModem({ name: 'busy-sms', network, number: '+4917011110001' });
  const tcp = await serveSmsTcp(modem, { port: 0 });
  const t = await startTestBridge();
  try {
    const r = await t.call('POST', '/api/interfaces', { body: { name: 'sms', kind: 'sms', device: tcp.device, settings: { poll_s: 5 } } });
    assert.is(r.status, 201, r.text);
    for (let i = 0; i < 250 && !(await t.call('GET', '/api/interfaces/sms')).body.state?.connected; i++) await sleep(20);
    const lock = await holdLock(t.dbPath);
    network.inject('+4917099990000', '+4917011110001', 'arrived while the database was locked');
    // The driver read it (+CMTI, AT+CMGR), was told "not stored", and left it on the SIM.
    const failures = async () => (await t.call('GET', '/api/interfaces/sms/stats')).body.stats.store_failures as number;
    for (let i = 0; i < 250 && (await failures()) === 0; i++) await sleep(20);
    assert.is(await failures(), 1, 'the driver was told "not stored"');
    assert.is(modem.storage.used, 1, 'still on the SIM');
    assert.is(t.bridge.services.core.held.waiting, 0, 'not held in memory: the SIM keeps it');
    await lock.release();
    // The next listing (poll_s) stores it and deletes it from the SIM.
    for (let i = 0; i < 500 && modem.storage.used > 0; i++) await sleep(20);
    assert.is(modem.storage.used, 0);
    const stored = (await t.call('GET', '/api/messages?direction=inbound&limit=10')).body.items.filter((m: { text: string }) => m.text === 'arrived while the database was locked');
    assert.is(stored.length, 1);
  } finally {
    await t.stop();
    await tcp.close();
    modem.close();
  }
});

test.run();
