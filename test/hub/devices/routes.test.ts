import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestHub, type TestHub } from '../helper.ts';

// Issue 15 item 5: GET /api/devices is paged like the bridge's lists: ?limit= and ?cursor=,
// {items, next_cursor} and a Link rel="next" header.

const T0 = '2026-01-01T00:00:00.000Z';
let h: TestHub;
test.before(async () => {
  h = await startTestHub();
  for (const id of ['brg-c', 'brg-a', 'brg-e', 'brg-b', 'brg-d']) await h.hub.store.recordHello('default', id, { version: '1.2.3', interfaces: [{ name: 'mesh' }], at: T0 });
  await h.hub.store.ensureTenant('other', T0);
  await h.hub.store.recordHello('other', 'brg-0', { version: '1', interfaces: [], at: T0 });
});
test.after(async () => {
  await h.stop();
});

test('without a limit, one page of everything (up to 100) and next_cursor null', async () => {
  const r = await h.call('GET', '/api/devices');
  assert.is(r.status, 200);
  assert.equal(r.body.items.map((d: { bridge_id: string }) => d.bridge_id), ['brg-a', 'brg-b', 'brg-c', 'brg-d', 'brg-e']);
  assert.is(r.body.next_cursor, null);
  assert.is(r.headers.get('link'), null);
  assert.equal(r.body.items[0], { bridge_id: 'brg-a', online: false, state: 'unknown', session: 0, last_seen: T0, first_seen: T0, version: '1.2.3', interfaces: [{ name: 'mesh' }] });
});

test('?limit=2 pages through by bridge_id, following next_cursor or the Link header', async () => {
  const seen: string[] = [];
  let path = '/api/devices?limit=2';
  for (let page = 0; page < 10; page++) {
    const r = await h.call('GET', path);
    assert.is(r.status, 200);
    assert.ok(r.body.items.length <= 2);
    seen.push(...r.body.items.map((d: { bridge_id: string }) => d.bridge_id));
    if (r.body.next_cursor === null) break;
    const link = r.headers.get('link');
    assert.ok(link, 'a next page has a Link header');
    const url = new URL(/^<([^>]+)>; rel="next"$/.exec(link!)![1], h.url);
    assert.is(url.searchParams.get('cursor'), r.body.next_cursor);
    assert.is(url.searchParams.get('limit'), '2');
    path = url.pathname + url.search;
  }
  assert.equal(seen, ['brg-a', 'brg-b', 'brg-c', 'brg-d', 'brg-e'], 'every bridge once, in order, none of another tenant');
});

test('a bad limit or cursor is 400', async () => {
  for (const q of ['limit=0', 'limit=1001', 'limit=x', 'cursor=' + Buffer.from('no/such id').toString('base64url'), 'page=2']) {
    const r = await h.call('GET', `/api/devices?${q}`);
    assert.is(r.status, 400, q);
  }
});

test.run();
