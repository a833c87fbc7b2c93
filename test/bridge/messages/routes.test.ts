import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule, createSim, sendText, settle } from '../../helpers/routing.ts';

// /api/messages (docs/api.md 4.6, issue 4): bad input per endpoint, history filters and keyset
// pagination, and DELETE clearing history only while deliveries in flight go on.

const clock = new FakeClock(Date.parse('2026-03-02T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

test('send, send-to-contact and simulate-mesh-rx refuse bad bodies with 400 naming the field', async () => {
  const send: Array<[Record<string, unknown>, string]> = [
    [{ to: 'x' }, 'body.text'],
    [{ to: 'x', text: 'a', payload_b64: 'YQ==' }, 'body.text'],
    [{ to: 'x', payload_b64: 'not base64!' }, 'body.payload_b64'],
    [{ to: 'x', payload_b64: 'YQ=' }, 'body.payload_b64'],
    [{ to: '', text: 'a' }, 'body.to'],
    [{ to: '   ', text: 'a' }, 'body.to'],
    [{ text: 'a' }, 'body.to'],
    [{ to: 'x', text: '' }, 'body.text'],
    [{ to: 'x', text: 'a', channel: 256 }, 'body.channel'],
    [{ to: 'x', text: 'a', channel: -1 }, 'body.channel'],
    [{ to: 'x', text: 'a', priority: 'high' }, 'body'],
  ];
  for (const [body, path] of send) assertProblem(await t.call('POST', '/api/messages/send', { body }), 400, [path]);
  assertProblem(await t.call('POST', '/api/messages/send-to-contact', { body: { contact: 'nobody', text: 'a' } }), 400, ['body.contact']);
  assertProblem(await t.call('POST', '/api/messages/send-to-contact', { body: { contact: 'nobody' } }), 400, ['body.text']);
  // simulate-mesh-rx: no mesh interface yet, then an unknown, a non-mesh and a disabled one.
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a', text: 'hi' } }), 400, ['body.interface'], /no mesh interface \(meshtastic, meshcore, sim\)/);
  await t.call('POST', '/api/interfaces', { body: { name: 'sms-0', kind: 'sms', settings: {} } });
  await createSim(t.call, 'mesh-off', { enabled: false });
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a', text: 'hi', interface: 'ghost' } }), 400, ['body.interface']);
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a', text: 'hi', interface: 'sms-0' } }), 400, ['body.interface'], /sms interface/);
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a', text: 'hi', interface: 'mesh-off' } }), 400, ['body.interface'], /disabled/);
  // Without interface: the one mesh interface receives; with several, none is picked silently.
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a', text: 'hi' } }), 400, [], /disabled/);
  await createSim(t.call, 'mesh-two');
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a', text: 'hi' } }), 400, ['body.interface'], /^there are 2 mesh interfaces \(mesh-off, mesh-two\): name the one to receive on in interface$/);
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { text: 'hi' } }), 400, ['body.from']);
  assertProblem(await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a' } }), 400, ['body.text']);
  assert.is((await t.call('GET', '/api/messages')).body.items.length, 0, 'nothing refused reached history');
  assertProblem(await t.call('GET', '/api/messages/msg_nope'), 404);
});

test('history filters: direction, interface, kind, since, until and text search; bad filters are 400', async () => {
  const mesh = await createSim(t.call, 'mesh-0');
  await sendText(t.call, '!f0000001', 'Outbound ALPHA');
  clock.advance(60_000);
  const rx = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!f0000002', text: 'inbound beta 100%', interface: 'mesh-0' } });
  assert.is(rx.status, 202, rx.text);
  clock.advance(60_000);
  const data = await t.call('POST', '/api/messages/send', { body: { to: '!f0000003', payload_b64: Buffer.from([1, 2, 3]).toString('base64') } });
  assert.is(data.status, 202);
  const list = async (q: string) => (await t.call('GET', `/api/messages?${q}`)).body.items.map((m: any) => m.text ?? m.payload_b64);
  assert.equal(await list('direction=inbound'), ['inbound beta 100%']);
  assert.equal(await list('direction=outbound'), ['AQID', 'Outbound ALPHA'], 'newest first');
  assert.equal(await list('interface=mesh-0'), ['inbound beta 100%']);
  assert.equal(await list(`interface=${mesh.id}`), ['inbound beta 100%']);
  assert.equal(await list('kind=data'), ['AQID']);
  assert.equal(await list('q=alpha'), ['Outbound ALPHA'], 'text search ignores case');
  assert.equal(await list('q=100%25'), ['inbound beta 100%'], '% is searched for, not a wildcard');
  assert.equal(await list('q=0%25'), ['inbound beta 100%']);
  assert.equal(await list('q=_'), [], '_ is searched for, not a wildcard');
  assert.equal(await list('since=2026-03-02T12:01:00.000Z'), ['AQID', 'inbound beta 100%']);
  assert.equal(await list('until=2026-03-02T12:01:00.000Z'), ['Outbound ALPHA'], 'until is exclusive');
  assert.equal(await list('since=2026-03-02T12:00:30.000Z&until=2026-03-02T12:01:30.000Z&direction=inbound'), ['inbound beta 100%']);
  const bad: Array<[string, string]> = [
    ['direction=sideways', 'query.direction'],
    ['kind=smoke', 'query.kind'],
    ['since=yesterday', 'query.since'],
    ['until=2026-03-02T25:00:00Z', 'query.until'],
    ['since=2026-02-30', 'query.since'],
    ['q=', 'query.q'],
    ['colour=red', 'query'],
  ];
  for (const [q, path] of bad) assertProblem(await t.call('GET', `/api/messages?${q}`), 400, [path]);
  // The refusal says which forms are expected, with an example (issue 14).
  const why = await t.call('GET', '/api/messages?since=yesterday');
  assert.match(why.body.errors[0].message, /2026-11-22.*2026-11-22T08:00:00Z/);
  // A plain date means midnight UTC; a time without milliseconds or with an offset is the
  // same instant as the stored form (compared as instants, not as text).
  assert.equal(await list('since=2026-03-02'), ['AQID', 'inbound beta 100%', 'Outbound ALPHA']);
  assert.equal(await list('until=2026-03-02'), []);
  assert.equal(await list('since=2026-03-03'), []);
  assert.equal(await list('since=2026-03-02T12:01:00Z'), ['AQID', 'inbound beta 100%']);
  assert.equal(await list('since=2026-03-02T13:01:00%2B01:00'), ['AQID', 'inbound beta 100%']);
  const stats = (await t.call('GET', '/api/messages/stats')).body;
  assert.is(stats.total, 3);
  assert.equal(stats.by_direction, { inbound: 1, outbound: 2 });
  assert.equal(stats.by_kind, { data: 1, text: 2 });
  assert.is(stats.by_interface['mesh-0'], 1);
  assert.is(stats.by_interface_id[mesh.id], 1);
});

test('keyset pagination: limit, next_cursor, Link header; bad limit or cursor is 400', async () => {
  for (let i = 0; i < 5; i++) await sendText(t.call, '!page0000', `page ${i}`);
  const seen: string[] = [];
  let path = '/api/messages?q=page&limit=2';
  let pages = 0;
  for (;;) {
    const r = await t.call('GET', path);
    assert.is(r.status, 200, r.text);
    pages++;
    seen.push(...r.body.items.map((m: any) => m.text));
    const link = r.headers.get('link');
    if (r.body.next_cursor === null) {
      assert.is(link, null, 'no Link on the last page');
      break;
    }
    assert.ok(r.body.items.length === 2);
    const m = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
    assert.ok(m, `Link header: ${link}`);
    const next = new URL(m![1], t.url); // relative to the request (RFC 8288 section 3.2)
    assert.is(next.searchParams.get('cursor'), r.body.next_cursor);
    assert.is(next.searchParams.get('q'), 'page', 'the Link keeps the filters');
    path = next.pathname + next.search;
  }
  assert.is(pages, 3);
  assert.equal(seen, ['page 4', 'page 3', 'page 2', 'page 1', 'page 0'], 'every message once, newest first');
  for (const q of ['limit=0', 'limit=1001', 'limit=two']) assertProblem(await t.call('GET', `/api/messages?${q}`), 400, ['query.limit']);
  for (const c of ['garbage', Buffer.from('msg_short').toString('base64url'), Buffer.from('dlv_01M7Z549TJYPE8EFFRTHXNMDB9').toString('base64url').slice(0, 10)]) {
    assertProblem(await t.call('GET', `/api/messages?cursor=${c}`), 400, ['query.cursor']);
  }
  assertProblem(await t.call('GET', '/api/deliveries?cursor=garbage'), 400, ['query.cursor']);
  assertProblem(await t.call('GET', '/api/audit?cursor=garbage'), 400, ['query.cursor']);
});

test('DELETE /api/messages clears history only: deliveries in flight keep going', async () => {
  await createSim(t.call, 'slow', { device: 'sim://msg-slow', settings: { latency_ms: 5000 } });
  await createSim(t.call, 'parked', { device: 'sim://msg-parked', enabled: false });
  await createRule(t.call, 'to-slow', { match: { direction: 'outbound', to: ['!clear000'] }, action: 'forward', destinations: [{ interface: 'slow', to: '{to}' }, { interface: 'parked', to: '{to}' }] });
  const sent = await sendText(t.call, '!clear000', 'keep going');
  await settle();
  const [inFlight, waiting] = sent.deliveries;
  assert.is((await t.call('GET', `/api/deliveries/${inFlight.id}`)).body.state, 'sending');

  const cleared = await t.call('DELETE', '/api/messages');
  assert.is(cleared.status, 200, cleared.text);
  assert.ok(cleared.body.deleted >= 1);
  assert.is((await t.call('GET', '/api/messages')).body.items.length, 0);
  assert.is((await t.call('GET', `/api/messages/${sent.message.id}`)).status, 404);
  assert.is((await t.call('GET', '/api/messages/stats')).body.total, 0);

  clock.advance(5000);
  await settle();
  const done = (await t.call('GET', `/api/deliveries/${inFlight.id}`)).body;
  assert.is(done.state, 'delivered', 'the send in flight finished');
  await t.call('POST', '/api/interfaces/parked/enable');
  await settle();
  assert.is((await t.call('GET', `/api/deliveries/${waiting.id}`)).body.state, 'delivered', 'the waiting one went out later');
  const both = (await t.call('GET', `/api/deliveries/message/${sent.message.id}`)).body.items;
  assert.is(both.length, 2, 'deliveries of a cleared message stay listed');
});

test('send-to-contact resolves the contact for the destination kind; a decision is always recorded', async () => {
  await t.call('POST', '/api/contacts', { body: { name: 'ann', addresses: { mesh: '!a0a0a0a0' } } });
  await createSim(t.call, 'to-ann', { device: 'sim://msg-ann' });
  const rule = await createRule(t.call, 'ann-rule', { match: { direction: 'outbound', to: ['@ann'] }, action: 'forward', destinations: [{ interface: 'to-ann', to: '@ann' }] });
  const r = await t.call('POST', '/api/messages/send-to-contact', { body: { contact: '@ann', text: 'hi ann' } });
  assert.is(r.status, 202, r.text);
  assert.is(r.body.message.to, '@ann');
  assert.is(r.body.message.decision.rule_id, rule.id);
  assert.equal(r.body.deliveries.map((d: any) => d.to), ['!a0a0a0a0']);
  // A frame heard on a radio that merely claims "@ann" as its destination borrows no rule.
  await t.call('PUT', `/api/access-rules/${rule.id}`, { body: { name: 'ann-rule', match: { to: ['@ann'] }, schedule: null, action: 'forward', destinations: [{ interface: 'to-ann', to: '@ann' }] } });
  const heard = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!f0000009', to: '@ann', text: 'spoof', interface: 'mesh-0' } });
  assert.is(heard.status, 202, heard.text);
  assert.is(heard.body.message.decision.rule_id, null);
  const none = await sendText(t.call, '!nomatch0');
  assert.equal(none.message.decision, { rule_id: null, action: 'store', reason: 'no enabled rule matched; default action store' });
});

test('DELETE /api/messages takes before and the filters GET has; an unknown parameter is 400 and deletes nothing', async () => {
  await t.call('DELETE', '/api/messages');
  const old = await sendText(t.call, '!del00001', 'old one');
  await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!del00009', text: 'old heard', interface: 'mesh-0' } });
  clock.advance(3600_000);
  const cut = new Date(clock.now()).toISOString();
  const fresh = await sendText(t.call, '!del00002', 'fresh one');
  const texts = async () => (await t.call('GET', '/api/messages')).body.items.map((m: any) => m.text);
  assert.equal(await texts(), ['fresh one', 'old heard', 'old one']);

  // The case: a cut-off older than every message deletes nothing.
  const none = await t.call('DELETE', '/api/messages?before=2020-01-01T00:00:00Z');
  assert.is(none.status, 200, none.text);
  assert.is(none.body.deleted, 0);
  assert.is((await t.call('DELETE', '/api/messages?before=2020-01-01')).body.deleted, 0, 'a plain date is midnight UTC');
  // Typos and unknown filters are refused, not read as "everything".
  for (const q of ['befor=2030-01-01T00:00:00Z', 'older_than=1d', 'limit=1', 'before=last-week']) {
    assertProblem(await t.call('DELETE', `/api/messages?${q}`), 400, [q.startsWith('before') ? 'query.before' : 'query']);
  }
  assert.equal(await texts(), ['fresh one', 'old heard', 'old one'], 'refused deletes deleted nothing');

  const inbound = await t.call('DELETE', `/api/messages?before=${cut}&direction=inbound`);
  assert.is(inbound.body.deleted, 1);
  assert.equal(await texts(), ['fresh one', 'old one']);
  assert.is((await t.call('DELETE', '/api/messages?q=nothing-like-this')).body.deleted, 0);
  const before = await t.call('DELETE', `/api/messages?before=${encodeURIComponent(cut)}`);
  assert.is(before.body.deleted, 1);
  assert.is((await t.call('GET', `/api/messages/${old.message.id}`)).status, 404);
  assert.is((await t.call('GET', `/api/messages/${fresh.message.id}`)).status, 200, 'the newer message stays');
});

test.run();
