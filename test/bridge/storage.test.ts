import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DatabaseSync } from 'node:sqlite';
import { openSqlite } from '../../src/db/sqlite.ts';
import { AuditStore } from '../../src/bridge/audit/store.ts';
import { MAX_DEFERRED_WRITES, WriteBehind } from '../../src/bridge/engine/write-behind.ts';
import { createLogger } from '../../src/lib/log.ts';
import { startTestBridge } from '../helpers/bridge.ts';
import { holdLock } from '../helpers/db-lock.ts';
import { assertProblem } from '../helpers/routing.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Storage trouble (issue 14). A full disk (item 6), simulated with SQLite's PRAGMA max_page_count on the bridge's
// own connection: a write that needs one more page than the limit fails with SQLITE_FULL, as it
// does on a file system with no room left, and raising the limit is the room coming back. (A
// real full file system was checked by hand on a 2 MiB tmpfs: docs/decisions.md, issue 14.)

const pages = (db: DatabaseSync, pragma: string) => Number(Object.values(db.prepare(`PRAGMA ${pragma}`).get() ?? {})[0]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Caps the database at the pages it has now: the next write that needs a page fails. */
function fillDisk(db: DatabaseSync): void {
  db.exec(`PRAGMA max_page_count = ${pages(db, 'page_count')}`);
}
function freeDisk(db: DatabaseSync): void {
  db.exec('PRAGMA max_page_count = 1000000');
}

test('a full disk: writes answer 507 storage-full, health says db "full", and both recover when room returns', async () => {
  const t = await startTestBridge();
  try {
    const db = t.bridge.services.db;
    assert.is((await t.call('GET', '/api/health', { key: null })).body.db, 'ok');
    fillDisk(db);
    // Reads still work, the first of a key's minute too (its last_used_at is a hint, skipped).
    const read = await t.call('GET', '/api/contacts');
    assert.is(read.status, 200, read.text);
    // Contacts until one needs a page the disk does not have (free pages inside the file are used first).
    let full: Awaited<ReturnType<typeof t.call>> | undefined;
    let stored = 0;
    for (let i = 0; i < 2000 && !full; i++) {
      const r = await t.call('POST', '/api/contacts', { body: { name: `c${i}`, addresses: { sms: `+49170${String(1_000_000 + i)}` } } });
      if (r.status === 201) stored++;
      else full = r;
    }
    assert.ok(full, 'a write met the full disk');
    assertProblem(full!, 507, [], /disk holding the database is full/);
    assert.is(full!.body.type, 'https://fieldbridge.dev/problems/storage-full');
    assert.is(full!.body.title, 'Insufficient Storage');
    assert.ok(t.logs.some((l) => /"event":"storage_full"/.test(l)), 'the refusal is logged');

    // Health answers at once, 503, naming the state; the detail says how much room is left.
    await sleep(1100); // past the last check's second
    const started = performance.now();
    const h = await t.call('GET', '/api/health', { key: null });
    assert.ok(performance.now() - started < 500, 'health did not wait');
    assert.is(h.status, 503, h.text);
    assert.is(h.body.status, 'unavailable');
    assert.is(h.body.db, 'full');
    assert.match(h.body.db_detail, /bytes left for the database/);

    // Reads still work while the disk is full.
    assert.is((await t.call('GET', '/api/contacts')).status, 200);

    // Room comes back: nothing to restart.
    freeDisk(db);
    await sleep(1100);
    const back = await t.call('GET', '/api/health', { key: null });
    assert.is(back.status, 200, back.text);
    assert.is(back.body.db, 'ok');
    assert.is(back.body.db_detail, null);
    const again = await t.call('POST', '/api/contacts', { body: { name: 'after', addresses: { sms: '+4917099999999' } } });
    assert.is(again.status, 201, again.text);
    // The audit entries of the refused calls waited in memory and are written now.
    const audit = await t.call('GET', '/api/audit?limit=1000');
    assert.is(audit.status, 200, audit.text);
    const refused = audit.body.items.filter((e: { status: number }) => e.status === 507);
    assert.ok(refused.length >= 1, `the 507 answers are audited: ${audit.text.slice(0, 300)}`);
    assert.ok(stored >= 0);
  } finally {
    await t.stop();
  }
});

test('a write that fails for room is "full" in the health even while the file system has room', async () => {
  const t = await startTestBridge();
  try {
    const db = t.bridge.services.db;
    // A limit just above what the file has: the check's own room estimate stays over 1 MiB
    // (about 1.2 MiB of pages, whatever the page size)...
    db.exec(`PRAGMA max_page_count = ${pages(db, 'page_count') + Math.ceil(1_250_000 / pages(db, 'page_size'))}`);
    // ...but one large write does not fit (a transaction, so the failure is noted).
    const { transaction } = await import('../../src/db/sqlite.ts');
    assert.throws(() => transaction(db, () => db.prepare("INSERT INTO audit_log (at, key_id, method, path, status, request_id) VALUES ('x', NULL, 'POST', zeroblob(2000000), 0, 'r')").run()), /full/);
    const h = await t.call('GET', '/api/health', { key: null });
    assert.is(h.body.db, 'full', h.text);
    assert.match(h.body.db_detail, /a write failed/);
  } finally {
    await t.stop();
  }
});

test('the delivery write-behind keeps its writes through a full disk, holds sends while it cannot write, and recovers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-wb-'));
  const db = openSqlite(join(dir, 'x.db'));
  try {
    db.exec('CREATE TABLE t (v BLOB)');
    const logs: string[] = [];
    const wb = new WriteBehind(db, createLogger({ format: 'json', write: (l) => logs.push(l) }));
    fillDisk(db);
    wb.defer('dlv_1', 'ifc_1', () => db.prepare('INSERT INTO t VALUES (zeroblob(100000))').run());
    wb.flush();
    assert.ok(wb.backlogged, 'a failed flush holds the dispatcher');
    assert.equal(wb.dirtyIds(), ['dlv_1'], 'the write is kept');
    assert.ok(logs.some((l) => /delivery_state_write_failed/.test(l)));
    freeDisk(db);
    // The retry a second later commits it, without anyone asking.
    await sleep(1200);
    assert.not.ok(wb.backlogged);
    assert.equal(wb.dirtyIds(), []);
    assert.is(pages(db, 'page_count') > 2, true);
    assert.is((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 1);
    assert.ok(logs.some((l) => /delivery_state_write_recovered/.test(l)));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the delivery write-behind is bounded: past MAX_DEFERRED_WRITES it holds the dispatcher', () => {
  const db = new DatabaseSync(':memory:');
  const wb = new WriteBehind(db, createLogger({ write: () => {} }));
  db.exec('BEGIN'); // a flush inside someone else's transaction waits: the writes pile up
  for (let i = 0; i < MAX_DEFERRED_WRITES; i++) wb.defer(`d${i}`, 'i', () => {});
  assert.ok(wb.backlogged);
  db.exec('COMMIT');
  wb.flush();
  assert.not.ok(wb.backlogged);
  db.close();
});

test('the audit write-behind keeps at most its bound in memory while it cannot write, and says how many it dropped', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-audit-'));
  const { openBridgeDatabase } = await import('../../src/bridge/app.ts');
  const db = openBridgeDatabase(join(dir, 'bridge.db'));
  const logs: string[] = [];
  const { MAX_QUEUED_AUDIT_ENTRIES } = await import('../../src/bridge/audit/store.ts');
  const store = new AuditStore(db, createLogger({ format: 'json', write: (l) => logs.push(l) }));
  try {
    fillDisk(db);
    const entry = (i: number) => ({ at: new Date().toISOString(), key_id: null, method: 'POST', path: `/api/x/${'p'.repeat(200)}${i}`, status: 507, request_id: `r${i}` });
    for (let i = 0; i < MAX_QUEUED_AUDIT_ENTRIES + 500; i++) store.insert(entry(i));
    store.flush();
    assert.ok(logs.some((l) => /audit_write_failed/.test(l)));
    assert.ok(logs.some((l) => /"event":"audit_entries_dropped"/.test(l)), 'dropping is logged');
    freeDisk(db);
    store.flush();
    const rows = (db.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n;
    assert.is(rows, MAX_QUEUED_AUDIT_ENTRIES, 'the first entries, up to the bound, were kept and written');
    const lost = logs.map((l) => JSON.parse(l)).find((l) => l.event === 'audit_entries_lost');
    assert.is(lost?.count, 500, 'the count of dropped entries is logged once writing works again');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 14, item 7: SQLite's busy wait blocks the event loop. The write-behinds no longer wait
// on a lock another process holds: they fail at once and retry in a second.


test('a call that meets a held lock answers 503 after 5 s, and the audit entry does not freeze the bridge another 5 s', async () => {
  const t = await startTestBridge();
  try {
    await t.call('GET', '/api/contacts'); // the key's last use is written now, not under the lock
    const { released } = await holdLock(t.dbPath, 7500);
    const started = performance.now();
    const r = await t.call('POST', '/api/contacts', { body: { name: 'locked', addresses: { sms: '+4917012345678' } } });
    const ms = performance.now() - started;
    assert.is(r.status, 503, r.text);
    assert.is(r.body.type, 'https://fieldbridge.dev/problems/db-busy');
    // Before: the answer went out at 5 s, then the audit flush (same event loop) waited for
    // the lock until it was released, so this in-process client read it only at ~7.5 s.
    assert.ok(ms < 6200, `answered after ${Math.round(ms)} ms`);
    const h = performance.now();
    assert.is((await t.call('GET', '/api/health', { key: null })).body.db, 'busy');
    assert.ok(performance.now() - h < 500);
    await released;
    // The entry waited in memory and is written once the lock is gone.
    await sleep(1200);
    const audit = await t.call('GET', '/api/audit');
    assert.ok(audit.body.items.some((e: { status: number; path: string }) => e.status === 503 && e.path === '/api/contacts'), audit.text);
  } finally {
    await t.stop();
  }
});

test('the delivery write-behind does not wait on a held lock either; its writes commit after it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-wb-lock-'));
  const db = openSqlite(join(dir, 'x.db'));
  try {
    db.exec('CREATE TABLE schema_version (version INTEGER); INSERT INTO schema_version VALUES (1); CREATE TABLE t (v)');
    // A group commit at once (the default waits GROUP_COMMIT_MS for a commit to ride).
    const wb = new WriteBehind(db, createLogger({ write: () => {} }), { groupCommitMs: 0 });
    const { released } = await holdLock(join(dir, 'x.db'), 2000);
    const started = performance.now();
    wb.defer('d1', 'i1', () => db.prepare('INSERT INTO t VALUES (1)').run());
    await new Promise((r) => setImmediate(r)); // the scheduled flush runs here
    await new Promise((r) => setImmediate(r));
    assert.ok(performance.now() - started < 500, `the event loop was blocked ${Math.round(performance.now() - started)} ms`);
    assert.ok(wb.backlogged, 'the failed flush holds the dispatcher');
    assert.equal(wb.dirtyIds(), ['d1']);
    await released;
    await sleep(1200);
    assert.not.ok(wb.backlogged);
    assert.is((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 1);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bridge.storage.sync: full (the default, issue 30) syncs every commit; a change applies as soon as it is written (issue 22)', async () => {
  const t = await startTestBridge();
  try {
    const level = () => pages(t.bridge.services.db, 'synchronous');
    assert.is(level(), 2, 'FULL by default');
    const r = await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { storage: { sync: 'normal' } } } });
    assert.is(r.status, 200, r.text);
    assert.is(level(), 1, 'NORMAL at once');
    await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { storage: { sync: 'full' } } } });
    assert.is(level(), 2);
  } finally {
    await t.stop();
  }
});

test.run();
