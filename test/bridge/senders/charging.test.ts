import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createSim } from '../../helpers/routing.ts';

// What a sender is charged (issue 17 review): a limit takes a token only when a delivery of one
// of its kinds was queued, and `forwards` counts only messages that queued one; of a fallback
// list only the member that starts now is charged.

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
let smsId: string;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const ok = (method: string, path: string, body?: unknown) => expectOk(t.call, method, path, body);
const heard = (from: string, text = 'hello') => ok('POST', '/api/messages/simulate-mesh-rx', { interface: 'mesh-0', from, text });

test('setup: an SMS modem whose queue holds one delivery; a limit of one SMS forward per hour', async () => {
  await createSim(t.call, 'mesh-0', { device: 'sim://charging-a' });
  await createSim(t.call, 'mesh-1', { device: 'sim://charging-b' });
  smsId = (await ok('POST', '/api/interfaces', { name: 'sms-0', kind: 'sms', settings: {}, retry: { queue_max_deliveries: 1 } })).id;
  await ok('POST', '/api/access-rules', { name: 'to-sms', match: { direction: 'inbound', from: ['!000000a1'] }, action: 'forward', destinations: [{ interface: 'sms-0', to: '+4915112345678' }] });
  await ok('POST', '/api/access-rules', {
    name: 'list', match: { direction: 'inbound', from: ['!000000b1'] }, action: 'forward',
    destinations: [{ strategy: 'ordered', fallback: [{ interface: 'mesh-1', to: '^all' }, { interface: 'sms-0', to: '+4915112345678' }] }],
  });
  await ok('PUT', '/api/senders/policy', { limits: [{ kinds: ['sms'], per_hour: 1, burst: 1 }] });
});

test('a message a full queue refused takes no token and is not a forward', async () => {
  // A flash message fills the SMS queue (the modem is unbound, so it stays): nothing can evict it.
  const [flash] = t.bridge.services.pipeline.ingest({
    direction: 'outbound', interfaceId: null, from: 'local', to: '+4915112345678', channel: null, kind: 'text', text: 'flash', payload: null,
    precedence: 'flash', route: { destinations: [{ interface: smsId, to: '+4915112345678' }], reason: 'test' },
  });
  assert.is(flash.deliveries.length, 1);
  const refused = await heard('!000000a1');
  assert.equal(refused.deliveries, []);
  assert.match(refused.message.decision.reason, /queue of 'sms-0' full/);
  const row = await ok('GET', '/api/senders/!a1');
  assert.equal([row.messages_in, row.forwards], [1, 0], 'nothing queued: not a forward');
  // The queue is free again: the sender's one token is still there.
  await ok('POST', `/api/messages/${flash.message.id}/cancel`, {});
  const sent = await heard('!000000a1');
  assert.is(sent.message.action, 'forward');
  assert.is(sent.deliveries.length, 1);
  assert.equal((await ok('GET', '/api/senders/!a1')).forwards, 1);
  // That one took it.
  assert.is((await heard('!000000a1')).message.action, 'store');
});

test('a fallback list charges only the member that starts: a mesh first member leaves the SMS limit alone', async () => {
  for (let i = 0; i < 3; i++) {
    const r = await heard('!000000b1');
    assert.is(r.message.action, 'forward', r.message.decision.reason);
    assert.equal(r.deliveries.map((d: any) => d.interface_id), [(await ok('GET', '/api/interfaces/mesh-1')).id]);
  }
  const p = await ok('POST', '/api/messages/preview', { mode: 'mesh-rx', interface: 'mesh-0', from: '!000000b1', text: 'x' });
  assert.equal(p.parts[0].sender.limits, [], 'no limit applies to a list whose starting member is a mesh');
});

test.run();
