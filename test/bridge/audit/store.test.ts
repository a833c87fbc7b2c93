import { statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';

// The audit log is bounded (issue 14, item 1): requests without a valid key write nothing,
// paths are cut to AUDIT_PATH_MAX characters, and the table never holds more than
// bridge.audit.max_rows entries.

// The bound, written out rather than imported, so the file also runs against code without it.
const AUDIT_PATH_MAX = 512;

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

/** Sends n requests, `concurrency` at a time over keep-alive connections from localAddress;
 *  answers the count of each status. */
async function hammer(n: number, o: { method: string; path: (i: number) => string; key?: (i: number) => string | null; localAddress?: string; concurrency?: number }): Promise<Record<number, number>> {
  const url = new URL(t.url);
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency ?? 16 });
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const key = o.key?.(i) ?? null;
      const req = request({ host: url.hostname, port: url.port, method: o.method, path: o.path(i), agent, localAddress: o.localAddress, headers: key ? { authorization: `Bearer ${key}` } : {} }, (res) => {
        statuses[res.statusCode!] = (statuses[res.statusCode!] ?? 0) + 1;
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  const worker = async () => {
    while (next < n) await one(next++);
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency ?? 16 }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

/** The database as it is on disk once everything is committed and the WAL folded in. */
function diskState() {
  const { db, audit } = t.bridge.services;
  audit.flush();
  const wal = statSync(`${t.dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
  const rows = (db.prepare('SELECT count(*) AS n, coalesce(max(id), 0) AS max FROM audit_log').get() as { n: number; max: number });
  return { wal, pages, bytes: statSync(t.dbPath).size, audit_rows: rows.n, audit_max_id: rows.max };
}

const LONG = 'x'.repeat(15_000);

test('10,000 requests without a valid key and with 15 KB paths leave the database file unchanged', async () => {
  // Something audited first, so the table and its pages exist.
  assert.is((await t.call('POST', '/api/interfaces', { body: { name: 'first', kind: 'sim', settings: {} } })).status, 201);
  const started = Date.now();
  const before = diskState();
  assert.is(before.audit_rows, 1);

  // 5,000 from 250 loopback addresses, 20 each: every one a 401, none rate-limited.
  const spread = await Promise.all(Array.from({ length: 250 }, (_, a) => hammer(20, {
    method: 'DELETE', path: () => `/api/interfaces/${LONG}`, localAddress: `127.0.${1 + Math.floor(a / 200)}.${2 + (a % 200)}`, concurrency: 2,
    key: (i) => (i % 2 === 0 ? null : 'fbb_aaaaaaaaaaaa_' + 'x'.repeat(43)),
  })));
  // 5,000 from one address: 20 are 401, then 429 while its allowance is spent.
  const single = await hammer(5000, { method: 'POST', path: () => `/api/interfaces/${LONG}/disable`, localAddress: '127.0.0.1' });

  const after = diskState();
  assert.equal({ ...after, wal: 0 }, { ...before, wal: 0 }, 'same pages, bytes and audit rows');
  assert.is(after.wal, 0, 'nothing was written to the WAL since the first checkpoint');

  const spreadStatuses: Record<number, number> = {};
  for (const s of spread) for (const [status, n] of Object.entries(s)) spreadStatuses[Number(status)] = (spreadStatuses[Number(status)] ?? 0) + n;
  assert.equal(spreadStatuses, { 401: 5000 }, 'all 401');
  assert.is((single[401] ?? 0) + (single[429] ?? 0), 5000, JSON.stringify(single));
  assert.ok(single[429] >= 4900, `most are rate-limited: ${JSON.stringify(single)}`);

  const metrics = (await t.call('GET', '/metrics')).text;
  assert.match(metrics, new RegExp(`fieldbridge_auth_failures_total\\{reason="no_key"\\} ${2500 + single[401]}\n`));
  assert.match(metrics, /fieldbridge_auth_failures_total\{reason="bad_key"\} 2500\n/);
  assert.match(metrics, new RegExp(`fieldbridge_auth_failures_total\\{reason="rate_limited"\\} ${single[429]}`));
  // At most one line per source per minute, none of them quoting the path.
  const logged = t.logs.map((l) => JSON.parse(l));
  const lines = logged.filter((l) => l.event === 'auth_failed');
  assert.is(new Set(lines.map((l) => l.source)).size, 251, 'every source was logged');
  const minutes = Math.ceil((Date.now() - started) / 60_000);
  assert.ok(lines.length <= 251 * minutes, `at most one line per source a minute: ${lines.length} lines in ${minutes} min`);
  assert.ok(t.logs.every((l) => l.length < 2000), 'no log line carries a long path');
  assert.not.ok(logged.some((l) => l.event === 'http_request' && l.level !== 'debug' && (l.status === 401 || l.status === 429)), 'refused requests have no access line above debug');
});

test('the audit log stays within bridge.audit.max_rows under 10,000 authorised writes; long paths are cut and marked', async () => {
  const set = await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { audit: { max_rows: 100 } } } });
  assert.is(set.status, 200, set.text);
  assert.equal(t.bridge.services.config.section('bridge').audit, { retention_days: 90, max_rows: 100 });
  let most = 0;
  for (let round = 0; round < 20; round++) {
    const statuses = await hammer(500, { method: 'DELETE', path: (i) => `/api/interfaces/${round}-${i}-${'y'.repeat(600)}`, key: () => t.ownerKey });
    assert.equal(statuses, { 404: 500 }, 'each answered (and audited)');
    most = Math.max(most, diskState().audit_rows);
  }
  assert.ok(most <= 100, `at most 100 rows at any check, saw ${most}`);
  const { db } = t.bridge.services;
  const rows = db.prepare('SELECT path FROM audit_log ORDER BY id').all() as Array<{ path: string }>;
  assert.is(rows.length, 100);
  assert.ok(rows.every((r) => r.path.length <= AUDIT_PATH_MAX), 'every path within the bound');
  for (const { path } of rows) {
    assert.match(path, /^\/api\/interfaces\/19-\d+-y+\.\.\.\[truncated, 6\d\d chars\]$/, 'the newest entries are kept, cut and marked');
    assert.is(path.length, AUDIT_PATH_MAX);
  }
  assert.is((await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { audit: { max_rows: 10 } } } })).status, 400, 'below 100 is refused');
});

test('boundedPath keeps short paths as they are and marks cut ones with their length', async () => {
  const { boundedPath, AUDIT_PATH_MAX: bound } = await import('../../../src/bridge/audit/store.ts');
  assert.is(bound, AUDIT_PATH_MAX);
  assert.is(boundedPath('/api/interfaces/a'), '/api/interfaces/a');
  assert.is(boundedPath('/' + 'a'.repeat(AUDIT_PATH_MAX - 1)).length, AUDIT_PATH_MAX);
  const cut = boundedPath('/' + 'b'.repeat(20_000));
  assert.is(cut.length, AUDIT_PATH_MAX);
  assert.ok(cut.endsWith('...[truncated, 20001 chars]'));
});

test.run();
