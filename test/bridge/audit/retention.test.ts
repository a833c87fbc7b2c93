import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RetentionWorker } from '../../../src/bridge/messages/retention.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, sendText, settle } from '../../helpers/routing.ts';

// The audit log (an entry for every mutating call made with a valid key, refused ones included)
// and retention (docs/api.md section 8: messages and resolved deliveries older than
// SERVICE_RETENTION_DAYS go; dead letters and configuration stay; audit entries go after
// bridge.audit.retention_days, 90 by default), on the bridge's own FakeClock.

const DAY = 86_400_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const clock = new FakeClock(T0);
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const auditEntries = async () => (await t.call('GET', '/api/audit?limit=1000')).body.items as Array<{ method: string; path: string; status: number; key_id: string | null }>;

test('every mutating call leaves an audit entry (refused ones too); reads leave none', async () => {
  const before = (await auditEntries()).length;
  const calls: Array<[string, string, unknown, number]> = [
    ['POST', '/api/interfaces', { name: 'aud', kind: 'sim', settings: {} }, 201],
    ['PUT', '/api/interfaces/aud', { name: 'aud', settings: {}, transforms: { inbound: [], outbound: [] }, retry: {} }, 200],
    ['POST', '/api/interfaces/aud/bind', { device: 'sim://audit' }, 200],
    ['POST', '/api/interfaces/aud/disable', undefined, 200],
    ['POST', '/api/interfaces/aud/enable', undefined, 200],
    ['POST', '/api/interfaces/aud/unbind', undefined, 200],
    ['POST', '/api/access-rules', { name: 'aud-rule', match: {}, schedule: null, action: 'store' }, 201],
    ['POST', '/api/access-rules/aud-rule/disable', undefined, 200],
    ['POST', '/api/access-rules/reorder', { order: ['aud-rule'] }, 200],
    ['DELETE', '/api/access-rules/aud-rule', undefined, 204],
    ['POST', '/api/object-groups', { name: 'aud-group', members: ['!a'] }, 201],
    ['DELETE', '/api/object-groups/aud-group', undefined, 204],
    ['POST', '/api/messages/send', { to: '!a', text: 'audited' }, 202],
    ['DELETE', '/api/messages', undefined, 200],
    ['POST', '/api/deliveries/dlv_nope/retry', undefined, 404],
    ['POST', '/api/interfaces', { name: 'BAD' }, 400],
    ['DELETE', '/api/interfaces/aud', undefined, 200],
  ];
  for (const [method, path, body, status] of calls) {
    const r = await t.call(method, path, body === undefined ? {} : { body });
    assert.is(r.status, status, `${method} ${path}: ${r.text}`);
    await t.call('GET', path.startsWith('/api/interfaces') ? '/api/interfaces' : '/api/deliveries/stats');
  }
  const entries = (await auditEntries()).slice(0, (await auditEntries()).length - before).reverse();
  assert.equal(entries.map((e) => [e.method, e.path, e.status]), calls.map(([m, p, , s]) => [m, p, s]), 'one entry per call, in order, and no GETs');
  assert.ok(entries.every((e) => typeof e.key_id === 'string' && e.key_id.startsWith('key_')), 'each names the key used');
});

test('audit: viewers may not read it (403, itself audited), pagination walks it, bad cursor 400', async () => {
  const viewer = await t.call('POST', '/api/auth/keys', { body: { label: 'viewer', role: 'viewer' } });
  assert.is(viewer.status, 201, viewer.text);
  assert.is((await t.call('GET', '/api/audit', { key: viewer.body.key })).status, 403);
  const denied = await t.call('POST', '/api/interfaces', { key: viewer.body.key, body: { name: 'nope', kind: 'sim', settings: {} } });
  assert.is(denied.status, 403);
  const newest = (await auditEntries())[0];
  assert.equal([newest.method, newest.path, newest.status, newest.key_id], ['POST', '/api/interfaces', 403, viewer.body.id]);

  const all = (await auditEntries()).length;
  let path = '/api/audit?limit=4';
  let seen = 0;
  for (;;) {
    const r = await t.call('GET', path);
    seen += r.body.items.length;
    if (!r.body.next_cursor) {
      assert.is(r.headers.get('link'), null);
      break;
    }
    path = /^<([^>]+)>; rel="next"$/.exec(r.headers.get('link') ?? '')![1];
  }
  assert.is(seen, all);
  for (const c of ['abc', '0', '-1']) assertProblem(await t.call('GET', `/api/audit?cursor=${c}`), 400, [], /cursor/);
  assertProblem(await t.call('GET', '/api/audit?limit=0'), 400, ['query.limit']);
});

test('retention: the daily worker deletes old messages and resolved deliveries, keeps dead letters and the rest', async () => {
  await createSim(t.call, 'ret-ok', { device: 'sim://ret-ok' });
  await createSim(t.call, 'ret-dead', { device: 'sim://ret-dead', settings: { behaviour: 'fail' }, retry: { max_attempts: 1 } });
  await createSim(t.call, 'ret-parked', { enabled: false, retry: { ttl_s: 2592000 } });
  await createRule(t.call, 'ret-rule', { match: { direction: 'outbound', to: ['!ret00000'] }, action: 'forward',
    destinations: [{ interface: 'ret-ok', to: '{to}' }, { interface: 'ret-dead', to: '{to}' }, { interface: 'ret-parked', to: 'a' }, { interface: 'ret-parked', to: 'b' }] });
  const old = await sendText(t.call, '!ret00000', 'old');
  await settle();
  const [delivered, dead, cancelled, waiting] = old.deliveries.map((d) => d.id);
  await t.call('POST', `/api/deliveries/${cancelled}/cancel`);
  const audits = (await auditEntries()).length;

  clock.advance(29 * DAY);
  await settle();
  const young = await sendText(t.call, '!ret00000', 'young');
  assert.is((await t.call('GET', `/api/messages/${old.message.id}`)).status, 200, '29 days old: kept');

  clock.advance(2 * DAY); // the daily run at day 31 sees the first message as over 30 days old
  await settle();
  assert.is((await t.call('GET', `/api/messages/${old.message.id}`)).status, 404, 'old message deleted');
  assert.is((await t.call('GET', `/api/messages/${young.message.id}`)).status, 200, 'young message kept');
  assert.is((await t.call('GET', `/api/deliveries/${delivered}`)).status, 404, 'old delivered delivery deleted');
  assert.is((await t.call('GET', `/api/deliveries/${cancelled}`)).status, 404, 'old cancelled delivery deleted');
  const letter = await t.call('GET', `/api/deliveries/${dead}`);
  assert.is(letter.status, 200, 'the dead letter stays');
  assert.is(letter.body.state, 'dead');
  assert.match(letter.body.last_error, /simulated failure/);
  assert.is((await t.call('GET', `/api/deliveries/${waiting}`)).status, 200, 'a delivery still waiting (or expired only yesterday) stays');
  assert.ok((await auditEntries()).length >= audits, 'audit entries are kept 90 days');
  for (const path of ['/api/interfaces/ret-ok', '/api/access-rules/ret-rule']) assert.is((await t.call('GET', path)).status, 200, `${path} kept`);
  assert.ok(t.logs.some((l) => l.includes('"retention_pruned"')), 'the worker logged what it pruned');
});

test('retention: 0 days keeps everything; a RetentionWorker on its own clock prunes by its own cut-off', async () => {
  const { messages, deliveries } = t.bridge.services;
  const seen = t.bridge.services.core.seen;
  const log = createLogger({ level: 'error', format: 'json', write: () => {} });
  const total = (await t.call('GET', '/api/messages/stats')).body.total;
  assert.ok(total > 0);
  const later = new FakeClock(clock.now() + 400 * DAY);
  assert.equal(new RetentionWorker({ db: t.bridge.services.db, messages, deliveries, seen, clock: later, log, days: 0 }).runOnce(), { messages: 0, deliveries: 0, senders: 0, buckets: 0, usage_days: 0 });
  assert.is((await t.call('GET', '/api/messages/stats')).body.total, total);
  const pruned = new RetentionWorker({ db: t.bridge.services.db, messages, deliveries, seen, clock: later, log, days: 365 }).runOnce();
  assert.is(pruned.messages, total);
  assert.is((await t.call('GET', '/api/messages/stats')).body.total, 0);
  assert.is((await t.call('GET', '/api/deliveries?state=dead')).body.items.length, 2, 'dead letters (one per message) survive any cut-off');
});

test('audit retention: the daily run deletes entries older than bridge.audit.retention_days (90 by default); 0 keeps them by age', async () => {
  const own = new FakeClock(T0);
  const b = await startTestBridge({ clock: own });
  const entries = async () => ((await b.call('GET', '/api/audit?limit=1000')).body.items as Array<{ at: string; path: string }>).map((e) => e.path);
  try {
    assert.is((await b.call('POST', '/api/object-groups', { body: { name: 'old', members: ['!a'] } })).status, 201);
    own.advance(89 * DAY);
    await settle();
    assert.is((await b.call('POST', '/api/object-groups', { body: { name: 'young', members: ['!a'] } })).status, 201);
    own.advance(1 * DAY);
    await settle();
    assert.equal(await entries(), ['/api/object-groups', '/api/object-groups'], 'exactly 90 days old: kept');
    own.advance(1 * DAY);
    await settle();
    assert.equal((await b.call('GET', '/api/audit?limit=1000')).body.items.map((e: { at: string }) => e.at), [new Date(T0 + 89 * DAY).toISOString()], 'the 91-day-old entry went, the 2-day-old one stayed');
    assert.ok(b.logs.some((l) => l.includes('"audit_pruned"') && l.includes('"old":1')), 'the run logged what it pruned');

    const setDays = async (days: number) => {
      const r = await b.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { audit: { retention_days: days } } } });
      assert.is(r.status, 200, r.text);
    };
    await setDays(0);
    own.advance(400 * DAY);
    await settle();
    assert.is((await entries()).length, 2, '0 days: nothing goes by age');
    await setDays(1);
    own.advance(1 * DAY);
    await settle();
    assert.equal(await entries(), ['/api/config/module'], 'the change applies at the next daily run: only the entry of the last day is left');
  } finally {
    await b.stop();
  }
});

test.run();
