import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';

// routing.rate_limit (docs/config.md): API sends spend a token bucket (burst, then
// sends_per_minute), so a runaway script cannot empty a satellite budget.

const clock = new FakeClock();
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock, rateLimit: true });
  await t.call('POST', '/api/interfaces', { body: { name: 'mesh', kind: 'sim' } });
  await t.call('POST', '/api/contacts', { body: { name: 'ann', addresses: { mesh: '!0000abcd' } } });
  const w = await t.call('POST', '/api/config/module', { body: { section: 'routing', settings: { rate_limit: { sends_per_minute: 60, burst: 3 } } } });
  assert.is(w.status, 200, w.text);
});
test.after(() => t.stop());

const send = () => t.call('POST', '/api/messages/send', { body: { to: '!00000001', text: 'hi' } });

test('the burst goes at once; the next send is 429 with Retry-After; time refills the bucket', async () => {
  for (let i = 0; i < 3; i++) assert.is((await send()).status, 202);
  const refused = await send();
  assert.is(refused.status, 429);
  assert.is(refused.headers.get('content-type'), 'application/problem+json');
  assert.match(refused.body.detail, /more than 60 sends per minute \(burst 3\)/);
  assert.is(refused.headers.get('retry-after'), '1');
  clock.advance(1000);
  assert.is((await send()).status, 202, 'one token back after a second at 60 a minute');
  assert.is((await send()).status, 429);
});

test('send-to-contact and simulate-mesh-rx spend the same budget; a refused send stores nothing', async () => {
  clock.advance(3000);
  const before = (await t.call('GET', '/api/messages/stats')).body.total;
  assert.is((await t.call('POST', '/api/messages/send-to-contact', { body: { contact: 'ann', text: 'x' } })).status, 202);
  assert.is((await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!1', text: 'x', interface: 'mesh' } })).status, 202);
  assert.is((await send()).status, 202);
  assert.is((await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!1', text: 'x', interface: 'mesh' } })).status, 429);
  assert.is((await t.call('POST', '/api/messages/send-to-contact', { body: { contact: 'ann', text: 'x' } })).status, 429);
  assert.is((await t.call('GET', '/api/messages/stats')).body.total, before + 3);
});

test('sends_per_minute 0 turns the limit off', async () => {
  await t.call('POST', '/api/config/module', { body: { section: 'routing', settings: { rate_limit: { sends_per_minute: 0 } } } });
  for (let i = 0; i < 30; i++) assert.is((await send()).status, 202);
});

test.run();
