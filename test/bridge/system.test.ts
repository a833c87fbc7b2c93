import { test } from 'uvu';
import { BUSY_SLICE_MS } from '../../src/db/busy.ts';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { startTestBridge } from '../helpers/bridge.ts';
import { holdLock } from '../helpers/db-lock.ts';

test('GET /api/health answers without a key', async () => {
  const t = await startTestBridge();
  try {
    const r = await t.call('GET', '/api/health', { key: null });
    assert.is(r.status, 200);
    assert.is(r.body.status, 'ok');
    assert.is(r.body.db, 'ok');
    assert.match(r.body.version, /^\d+\.\d+\.\d+/);
    assert.type(r.body.uptime_s, 'number');
  } finally {
    await t.stop();
  }
});

test('GET /api/health answers 503 when the database cannot be read', async () => {
  const t = await startTestBridge();
  try {
    t.bridge.services.db.close();
    const r = await t.call('GET', '/api/health', { key: null });
    assert.is(r.status, 503);
    assert.is(r.body.status, 'unavailable');
    assert.is.not(r.body.db, 'ok');
  } finally {
    await t.bridge.close(1000).catch(() => {});
  }
});


test('GET /api/health answers at once with db "busy" while another process holds the lock (issue 14)', async () => {
  const t = await startTestBridge();
  try {
    const lock = await holdLock(t.dbPath, 3000);
    const started = performance.now();
    const r = await t.call('GET', '/api/health', { key: null });
    const ms = performance.now() - started;
    assert.ok(ms < 500, `health took ${Math.round(ms)} ms while the lock was held`);
    assert.is(r.status, 503, r.text);
    assert.is(r.body.status, 'unavailable');
    assert.is(r.body.db, 'busy');
    assert.match(r.body.db_detail, /another process holds the database's write lock/);
    // Checked at most once a second: an immediate second call repeats the answer, no probe.
    assert.is((await t.call('GET', '/api/health', { key: null })).body.db, 'busy');
    // A read with a key answers at once too: the key's last_used_at (a hint) is not waited for.
    const read = performance.now();
    assert.is((await t.call('GET', '/api/interfaces')).status, 200);
    assert.ok(performance.now() - read < 500, `an authenticated read took ${Math.round(performance.now() - read)} ms`);
    await lock.released;
    await new Promise((r) => setTimeout(r, 1000));
    const after = await t.call('GET', '/api/health', { key: null });
    assert.is(after.status, 200, after.text);
    assert.is(after.body.db, 'ok');
    // The check gave the connection its wait back: a slice, the rest is waited on a timer (db/busy.ts).
    assert.is((t.bridge.services.db.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout, BUSY_SLICE_MS);
  } finally {
    await t.stop();
  }
});

const promtool = spawnSync('promtool', ['--version']).status === 0;

test('GET /metrics is valid Prometheus text (promtool check metrics)', async () => {
  assert.ok(promtool, 'promtool is missing: install the Debian package prometheus (.ci/run does)');
  const t = await startTestBridge();
  try {
    await t.call('GET', '/api/health');
    await t.call('GET', '/api/nope');
    await t.call('GET', '/api/auth/keys', { key: null });
    const r = await t.call('GET', '/metrics');
    assert.is(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0.0.4/);
    assert.match(r.text, /fieldbridge_http_requests_total\{method="GET",route="\/api\/health",status="200"\} 1/);
    assert.match(r.text, /fieldbridge_http_requests_total\{method="GET",route="\/api\/auth\/keys",status="401"\} 1/);
    assert.match(r.text, /fieldbridge_http_request_duration_seconds_bucket\{route="\/api\/health",le="\+Inf"\} 1/);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: r.text, encoding: 'utf8' });
    assert.is(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);
  } finally {
    await t.stop();
  }
});

test('GET /metrics needs a key', async () => {
  const t = await startTestBridge();
  try {
    assert.is((await t.call('GET', '/metrics', { key: null })).status, 401);
  } finally {
    await t.stop();
  }
});

test.run();
