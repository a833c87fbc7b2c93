import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 22: delivery states and audit entries are committed in groups (with the next message's
// transaction, or GROUP_COMMIT_MS later), and so are messages that come quickly (group commit
// of ingests: a shared COMMIT at most every INGEST_GROUP_MS), but an acknowledgement only ever
// follows its own commit. A real bridge process takes sends at 50 a second and is killed
// (SIGKILL: no drain, no checkpoint) in the middle of the burst, with requests in flight and a
// group open; after a restart on the same database every message answered 202 is there with the
// very deliveries it was given, and each of them is delivered (those whose delivered state had
// not been committed yet are sent again: at least once). Messages of the open group were never
// answered: they are owed nothing.

const RATE = 50;
const KILL_AFTER_MS = 1500;
const dir = mkdtempSync(join(tmpdir(), 'fb-write-crash-'));
const dbPath = join(dir, 'bridge.db');
let bridge: RestartableBridge;

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 during a burst at 50 msg/s: every acknowledged message and its deliveries are there after a restart', async () => {
  bridge = await startBridgeProcess(dbPath);
  await liftSendLimit(bridge.call);
  const created = (path: string, body: unknown) => expectStatus(bridge.call, 201, 'POST', path, body);
  // Two destinations, each on its own channel; one quick, one slow enough that sends are on
  // the air (and some 'sending' marks committed) when the process dies.
  await created('/api/interfaces', { name: 'burst-a', kind: 'sim', device: 'sim://burst-a', settings: { latency_ms: 2 } });
  await created('/api/interfaces', { name: 'burst-b', kind: 'sim', device: 'sim://burst-b', settings: { latency_ms: 40 } });
  await created('/api/access-rules', {
    name: 'burst', match: { direction: 'outbound', to: ['!burst000'] }, schedule: null, action: 'forward',
    destinations: [{ interface: 'burst-a', to: '{to}' }, { interface: 'burst-b', to: '{to}' }],
  });

  // Paced sends, each on its own (requests overlap when one is slow); the kill lands among them.
  const acknowledged = new Map<string, string[]>();
  const inFlight = new Set<Promise<void>>();
  let refused = 0;
  const started = performance.now();
  let killed = false;
  const killing = new Promise<void>((resolve) => setTimeout(() => {
    killed = true;
    void bridge.kill().then(resolve);
  }, KILL_AFTER_MS));
  for (let i = 0; !killed; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (killed) break;
    const send = bridge.call('POST', '/api/messages/send', { body: { to: '!burst000', text: `burst ${i}` } }).then(
      (r) => {
        if (r.status === 202) acknowledged.set(r.body.message.id, r.body.deliveries.map((d: { id: string }) => d.id));
        else refused++;
      },
      () => {
        refused++; // cut off by the kill: never acknowledged, so nothing is owed
      },
    );
    inFlight.add(send);
    void send.finally(() => inFlight.delete(send));
  }
  await killing;
  await Promise.allSettled([...inFlight]);
  assert.ok(acknowledged.size >= RATE, `at least a second of sends acknowledged before the kill: ${acknowledged.size} (refused or cut off: ${refused})`);
  for (const ids of acknowledged.values()) assert.is(ids.length, 2);

  await bridge.start();
  const ok = (path: string) => expectStatus(bridge.call, 200, 'GET', path);
  await waitUntil('every delivery to reach a final state', async () => {
    const s = await ok('/api/deliveries/stats');
    return s.pending + s.sending + s.retrying === 0 ? s : undefined;
  }, 30_000, 100);

  for (const [messageId, ids] of acknowledged) {
    const message = await bridge.call('GET', `/api/messages/${messageId}`);
    assert.is(message.status, 200, `acknowledged message ${messageId} is stored`);
    const items = (await ok(`/api/deliveries/message/${messageId}`)).items;
    assert.equal(items.map((d: { id: string }) => d.id).sort(), [...ids].sort(), `deliveries of ${messageId}`);
    assert.ok(items.every((d: { state: string }) => d.state === 'delivered'), `every delivery of ${messageId} delivered: ${JSON.stringify(items.map((d: { state: string }) => d.state))}`);
  }

  assert.is(await bridge.stop(), 0);
  const db = new DatabaseSync(dbPath, { readOnly: true });
  try {
    const stored = new Set((db.prepare('SELECT id FROM deliveries').all() as Array<{ id: string }>).map((r) => r.id));
    for (const ids of acknowledged.values()) for (const id of ids) assert.ok(stored.has(id), `delivery ${id} is in the file`);
    const states = db.prepare('SELECT state, count(*) AS n FROM deliveries GROUP BY state').all() as Array<{ state: string; n: number }>;
    assert.equal(states.map((r) => r.state), ['delivered'], JSON.stringify(states));
  } finally {
    db.close();
  }
});

test('a 202 answered from a group of sends: killed at once after it, the message is there after a restart', async () => {
  const groupDir = mkdtempSync(join(tmpdir(), 'fb-group-crash-'));
  const groupDb = join(groupDir, 'bridge.db');
  const b = await startBridgeProcess(groupDb);
  try {
    await liftSendLimit(b.call);
    await expectStatus(b.call, 201, 'POST', '/api/interfaces', { name: 'group-a', kind: 'sim', device: 'sim://group-crash-a', settings: {} });
    await expectStatus(b.call, 201, 'POST', '/api/access-rules', {
      name: 'group', match: { direction: 'outbound', to: ['!group000'] }, schedule: null, action: 'forward', destinations: [{ interface: 'group-a', to: '{to}' }],
    });
    await new Promise((r) => setTimeout(r, 400)); // past the window: the next send commits alone
    const send = (text: string) => b.call('POST', '/api/messages/send', { body: { to: '!group000', text } });
    assert.is((await send('alone')).status, 202);
    // Sent right after a commit, these share the next one; the first answer to come back is
    // followed at once by SIGKILL, before anything else can be written.
    const burst = Array.from({ length: 5 }, (_, i) => send(`grouped ${i}`));
    const first = await Promise.race(burst.map((p) => p.then((r) => (r.status === 202 ? r : new Promise<never>(() => {})))));
    await b.kill();
    await Promise.allSettled(burst);
    await b.start();
    const stored = await b.call('GET', `/api/messages/${first.body.message.id}`);
    assert.is(stored.status, 200, `the message answered 202 just before the kill is stored: ${stored.text}`);
    const deliveries = (await expectStatus(b.call, 200, 'GET', `/api/deliveries/message/${first.body.message.id}`)).items;
    assert.equal(deliveries.map((d: { id: string }) => d.id), first.body.deliveries.map((d: { id: string }) => d.id));
  } finally {
    await b.stop();
    rmSync(groupDir, { recursive: true, force: true });
  }
});

test.run();
