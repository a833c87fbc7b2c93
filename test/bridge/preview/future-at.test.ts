import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';

// A preview at a time far ahead (issue 17 review): `at` is for rules, schedules and buckets;
// ids keep the clock's time, so a message sent after the preview sorts as now, not as 9999.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const idTime = (id: string) => [...id.split('_')[1].slice(0, 10)].reduce((ms, c) => ms * 32 + CROCKFORD.indexOf(c), 0);

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

test('a preview at 9999-12-31 leaves the ids of later messages at the clock\'s time', async () => {
  const p = await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: 'ops', text: 'later', at: '9999-12-31T23:59:59Z' } });
  assert.is(p.status, 200, p.text);
  assert.is(p.body.at, '9999-12-31T23:59:59.000Z');
  clock.advance(1000);
  const r = await t.call('POST', '/api/messages/send', { body: { to: 'ops', text: 'now' } });
  assert.is(r.status, 202, r.text);
  const id: string = r.body.message?.id ?? r.body.id;
  assert.ok(id, r.text);
  const ms = idTime(id);
  assert.ok(Math.abs(ms - clock.now()) < 60_000, `id ${id} carries ${new Date(Math.min(ms, 8.64e15)).toISOString()}, the clock says ${new Date(clock.now()).toISOString()}`);
  // Newest first: the sent message heads the history.
  const list = await t.call('GET', '/api/messages');
  assert.is(list.body.items[0].id, id);
});

test.run();
