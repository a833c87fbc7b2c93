import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { INGEST_GROUP_MS } from '../../../src/bridge/app.ts';
import { commitCount, expectWrite, pendingCommit } from '../../../src/db/sqlite.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule } from '../../helpers/routing.ts';

// Group commit of ingests in a running bridge (issues 22 and 30; db/transaction.ts): heard frames
// that come within INGEST_GROUP_MS of the last commit share the next one, API sends share one
// while other sends are known to be coming, and each is acknowledged (202, a bearer's receive()
// answer) only once it is committed. Checked against a
// second connection on the same file, which sees exactly what a crash would leave.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const frame = (text: string) => ({ from: '!0000cafe', to: null, channel: null, kind: 'text' as const, text, payload: null, meta: {} });

/** A bridge whose sends to !0000beef and frames heard on `radio` go out on `out` (a sim interface). */
async function routedBridge(): Promise<{ t: TestBridge; radio: string; onDisk: (text: string) => boolean; close: () => Promise<void> }> {
  const t = await startTestBridge();
  const out = await t.call('POST', '/api/interfaces', { body: { name: 'out', kind: 'sim', device: 'sim://group-out', enabled: true } });
  const radio = await t.call('POST', '/api/interfaces', { body: { name: 'radio', kind: 'sim', device: 'sim://group-radio', enabled: true } });
  assert.is(out.status, 201, out.text);
  await createRule(t.call, 'out', { match: { direction: 'outbound', to: ['!0000beef'] }, action: 'forward', destinations: [{ interface: 'out', to: '{to}' }] });
  await createRule(t.call, 'heard', { match: { direction: 'inbound' }, action: 'forward', destinations: [{ interface: 'out', to: '!0000beef' }] });
  for (let i = 0; i < 100 && !t.bridge.services.host.runtime(out.body.id).connected; i++) await sleep(10);
  const other = new DatabaseSync(t.dbPath, { timeout: 0 });
  const onDisk = (text: string) => other.prepare('SELECT 1 FROM messages WHERE text = ?').get(text) !== undefined;
  return { t, radio: radio.body.id, onDisk, close: async () => {
    other.close();
    await t.stop();
  } };
}

/** Waits past the window, so the next ingest commits at once and the ones right after it group. */
const quiet = () => sleep(INGEST_GROUP_MS + 30);

test('sends one after another each commit at once; 8 clients that keep a send in flight share commits; each 202 comes once its message is committed', async () => {
  const { t, onDisk, close } = await routedBridge();
  try {
    const db = t.bridge.services.db;
    const send = (text: string) => t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text } }).then((r) => {
      // At the moment the answer arrives, the message is in the file.
      return { status: r.status, stored: onDisk(text) };
    });
    const before = commitCount(db);
    for (let i = 0; i < 5; i++) assert.equal(await send(`one by one ${i}`), { status: 202, stored: true });
    assert.is(commitCount(db) - before, 5, 'a lone client\'s sends are not held back for a group');
    const clients = 8;
    const rounds = 6;
    const middle = commitCount(db);
    const answers = await Promise.all(Array.from({ length: clients }, async (_, c) => {
      const mine = [];
      for (let r = 0; r < rounds; r++) mine.push(await send(`client ${c} round ${r}`));
      return mine;
    }));
    for (const a of answers.flat()) assert.equal(a, { status: 202, stored: true });
    const commits = commitCount(db) - middle;
    assert.ok(commits <= (clients * rounds) / 2, `${clients * rounds} sends from ${clients} clients took ${commits} commits`);
    // Their deliveries went out meanwhile (the dispatcher reads the open group).
    const all = 5 + clients * rounds;
    for (let i = 0; i < 100 && (await t.call('GET', '/api/deliveries/stats')).body.delivered < all; i++) await sleep(20);
    assert.is((await t.call('GET', '/api/deliveries/stats')).body.delivered, all);
  } finally {
    await close();
  }
});

test('a heard frame in a group is on disk once committed() settles (the bearer host answers the driver then)', async () => {
  const { t, radio, onDisk, close } = await routedBridge();
  try {
    const { held } = t.bridge.services.core;
    await quiet();
    held.receive(radio, frame('first'));
    assert.not.ok(held.pending(), 'a lone frame is committed at once');
    assert.ok(onDisk('first'));
    const commitsBefore = commitCount(t.bridge.services.db);
    const answers = ['f1', 'f2', 'f3'].map((text) => {
      held.receive(radio, frame(text));
      assert.ok(held.pending(), 'a frame right after a commit waits for the next');
      assert.not.ok(onDisk(text), 'not committed yet, so not answered yet');
      return held.whenCommitted()().then(() => onDisk(text));
    });
    assert.equal(await Promise.all(answers), [true, true, true]);
    // One COMMIT for the three (a store that committed the open group first made it three).
    assert.is(commitCount(t.bridge.services.db) - commitsBefore, 1);
  } finally {
    await close();
  }
});

test('a frame whose sender will not repeat it (a Meshtastic board acknowledged it already) is committed as soon as it is stored, and takes an open group with it', async () => {
  const { t, radio, onDisk, close } = await routedBridge();
  try {
    const { held } = t.bridge.services.core;
    await quiet();
    held.receive(radio, frame('before'));
    held.receive(radio, frame('repeatable'));
    assert.ok(held.pending(), 'a repeating sender\'s frame right after a commit waits for the window');
    held.receive(radio, frame('acknowledged over the air'), false, true);
    assert.not.ok(held.pending(), 'no group left open');
    assert.ok(onDisk('acknowledged over the air'));
    assert.ok(onDisk('repeatable'), 'the open group committed with it');
    held.receive(radio, frame('another'), false, true);
    assert.not.ok(held.pending());
    assert.ok(onDisk('another'), 'within the window too');
  } finally {
    await close();
  }
});

test('a send that fails in a group fails alone: the others are stored and answered 202', async () => {
  const { t, onDisk, close } = await routedBridge();
  try {
    t.bridge.services.db.exec("CREATE TRIGGER refuse_bad BEFORE INSERT ON messages WHEN NEW.text = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
    await quiet();
    await t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text: 'lone' } });
    const statuses = await Promise.all(['a', 'bad', 'b'].map((text) => t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text } }).then((r) => r.status)));
    assert.equal(statuses, [202, 500, 202]);
    assert.equal([onDisk('a'), onDisk('bad'), onDisk('b')], [true, false, true]);
  } finally {
    await close();
  }
});

test('a group whose COMMIT fails: every send in it is answered 5xx, its frames "not stored", and nothing of it remains', async () => {
  const { t, radio, onDisk, close } = await routedBridge();
  try {
    const db = t.bridge.services.db;
    // A deferred foreign key is checked at COMMIT: a message 'poison' makes its group's COMMIT
    // fail, as a full disk or an I/O error at commit would.
    db.exec(`CREATE TABLE test_parent (id INTEGER PRIMARY KEY);
      CREATE TABLE test_child (p INTEGER REFERENCES test_parent (id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER poison AFTER INSERT ON messages WHEN NEW.text = 'poison' BEGIN INSERT INTO test_child VALUES (42); END`);
    await quiet();
    await t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text: 'lone' } });
    const { held } = t.bridge.services.core;
    held.receive(radio, frame('heard in the group'));
    assert.ok(held.pending());
    // What the bearer host makes of it for the driver (bearer-host.ts): false, "not stored".
    const wait = held.whenCommitted();
    const heard = wait().then(() => true, () => false);
    // A fourth call still on its way (its body arriving) holds the group until the three are in it.
    const slow = expectWrite(db);
    const answered = Promise.all(['a', 'poison', 'b'].map((text) => t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text } })));
    const inGroup = () => (db.prepare("SELECT count(*) AS n FROM messages WHERE text IN ('a', 'poison', 'b')").get() as { n: number }).n;
    for (let i = 0; i < 200 && inGroup() < 3; i++) await sleep(10);
    assert.ok(held.pending(), 'the three wait in the group with the frame');
    slow.done();
    const sends = await answered;
    assert.equal(sends.map((r) => r.status), [500, 500, 500], sends.map((r) => r.text).join('\n'));
    assert.is(sends[0].body.type, 'https://fieldbridge.dev/problems/internal');
    assert.is(await heard, false, 'the driver is told "not stored"');
    assert.is(await wait().then(() => true, () => false), false, 'also when it asks after the failure');
    assert.ok(t.logs.some((l) => /"event":"group_commit_failed"/.test(l)));
    assert.not.ok(pendingCommit(db));
    // Nothing of the group in the file, nor in what the bridge shows.
    for (const text of ['a', 'poison', 'b', 'heard in the group']) assert.not.ok(onDisk(text), text);
    const messages = (await t.call('GET', '/api/messages?limit=100')).body.items.map((m: { text: string }) => m.text);
    assert.equal(messages.filter((x: string) => x !== 'lone'), []);
    // The dispatcher did not keep deliveries that no longer exist: the next send goes out, and
    // every delivery there is belongs to a stored message.
    db.exec('DROP TRIGGER poison');
    await quiet();
    const again = await t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text: 'a' } });
    assert.is(again.status, 202, again.text);
    for (let i = 0; i < 100 && (await t.call('GET', '/api/deliveries/stats')).body.delivered < 2; i++) await sleep(20);
    const stats = (await t.call('GET', '/api/deliveries/stats')).body;
    assert.is(stats.delivered, 2, JSON.stringify(stats));
    assert.is(stats.pending + stats.sending + stats.retrying, 0, JSON.stringify(stats));
    const orphans = db.prepare('SELECT count(*) AS n FROM deliveries WHERE message_id NOT IN (SELECT id FROM messages)').get() as { n: number };
    assert.is(orphans.n, 0);
  } finally {
    await close();
  }
});

const root = join(import.meta.dirname, '..', '..', '..');

/** `fieldbridge keys create` against the running bridge's database (SQLite's busy wait: 5 s). */
function keysCreate(dbPath: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(root, 'src', 'main.ts'), 'keys', 'create', '--role', 'viewer', '--label', 'while busy'], {
    env: { ...process.env, SERVICE_DB_PATH: dbPath },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

test('at 50 frames a second, `fieldbridge keys create` gets the write lock every time; the frames share commits otherwise, all stored in order', async () => {
  const { t, radio, close } = await routedBridge();
  let pace: ReturnType<typeof setInterval> | undefined;
  try {
    const { held } = t.bridge.services.core;
    const db = t.bridge.services.db;
    await quiet();
    let sent = 0;
    pace = setInterval(() => held.receive(radio, frame(`paced ${sent++}`)), 20);
    // Groups follow each other now: without the bridge leaving the lock free on request, such
    // a command failed 9 times in 15 (issue 22 review).
    await sleep(1000);
    const before = commitCount(db);
    const sentBefore = sent;
    await sleep(1000);
    const grouped = (commitCount(db) - before) / (sent - sentBefore);
    for (let i = 0; i < 4; i++) {
      const r = await keysCreate(t.dbPath);
      assert.is(r.code, 0, r.stderr);
    }
    clearInterval(pace);
    assert.ok(grouped < 0.3, `${grouped.toFixed(2)} commits per frame before the commands ran`);
    const keys = db.prepare("SELECT count(*) AS n FROM api_keys WHERE label = 'while busy'").get() as { n: number };
    assert.is(keys.n, 4);
    await sleep(INGEST_GROUP_MS + 50);
    const stored = (db.prepare("SELECT text FROM messages WHERE text LIKE 'paced %' ORDER BY rowid").all() as Array<{ text: string }>).map((r) => r.text);
    assert.equal(stored, Array.from({ length: sent }, (_, i) => `paced ${i}`), 'all stored, in the order heard');
  } finally {
    clearInterval(pace);
    await close();
  }
});

test.run();
