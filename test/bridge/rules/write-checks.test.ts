import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { assertProblem, createRule } from '../../helpers/routing.ts';

// Mistakes caught when they are written, in the words the route preview uses for them: a rule
// destination whose address its interface's kind can never take is refused; a send whose text
// can never fit an interface it is queued for is accepted (202) with a warning naming the limit.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
  for (const [name, kind] of [['sms-0', 'sms'], ['mesh-0', 'meshtastic']]) {
    const r = await t.call('POST', '/api/interfaces', { body: { name, kind } });
    assert.is(r.status, 201, r.text);
  }
});
test.after(async () => {
  await t.stop();
});

const rules = async () => (await t.call('GET', '/api/access-rules')).body.items.map((r: any) => r.name);

test('a Meshtastic node id as an SMS destination is refused with the reason the preview gives', async () => {
  await createRule(t.call, 'sms-by-to', { match: { direction: 'outbound', to: ['!921cf92a'] }, action: 'forward', destinations: [{ interface: 'sms-0', to: '{to}' }] });
  const preview = await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: '!921cf92a', text: 'hi' } });
  assert.is(preview.status, 200, preview.text);
  const previewed: string = preview.body.parts[0].deliveries[0].frames[0].error;
  assert.match(previewed, /^ERR_SMS_NUMBER: /);

  const body = { name: 'mesh-to-sms', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'sms-0', to: '!921cf92a' }] };
  const refused = await t.call('POST', '/api/access-rules', { body });
  assertProblem(refused, 400, ['body.destinations[0].to']);
  const message = refused.body.errors.find((e: any) => e.path === 'body.destinations[0].to').message;
  assert.is(message, `'!921cf92a' cannot be an address on interface sms-0 (sms): ${previewed}`);
  assert.not.ok((await rules()).includes('mesh-to-sms'), 'nothing was stored');

  // The same in a fallback member and on PUT; a phone number, a template and an @name pass.
  const member = await t.call('POST', '/api/access-rules', { body: { ...body, destinations: [{ fallback: [{ interface: 'mesh-0', to: '!921cf92a' }, { interface: 'sms-0', to: '!921cf92a' }] }] } });
  assertProblem(member, 400, ['body.destinations[0].fallback[1].to']);
  const fine = await createRule(t.call, 'sms-fine', { action: 'forward', destinations: [{ interface: 'sms-0', to: '+4917012345678' }, { interface: 'sms-0', to: '{from}' }] });
  const put = await t.call('PUT', `/api/access-rules/${fine.id}`, { body: { ...fine, destinations: [{ interface: 'sms-0', to: 'not a number' }] } });
  assertProblem(put, 400, ['body.destinations[0].to'], /ERR_SMS_NUMBER/);
  await t.call('DELETE', `/api/access-rules/${fine.id}`);
});

test('a 5 KB text toward a Meshtastic interface is accepted with a warning naming its 233-byte limit', async () => {
  await createRule(t.call, 'to-mesh', { match: { direction: 'outbound', to: ['!0000beef'] }, action: 'forward', destinations: [{ interface: 'mesh-0', to: '{to}' }] });
  const big = await t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text: 'x'.repeat(5000) } });
  assert.is(big.status, 202, big.text);
  const [delivery] = big.body.deliveries;
  assert.equal(big.body.warnings, [`delivery ${delivery.id} to !0000beef on interface mesh-0 (${delivery.interface_id}) will fail: 5000 bytes, larger than the interface's MTU of 233 (a split transform would send it in parts)`]);
  const small = await t.call('POST', '/api/messages/send', { body: { to: '!0000beef', text: 'hello' } });
  assert.is(small.status, 202, small.text);
  assert.is(small.body.warnings, undefined, 'a text that fits gets no warnings');
});

test('a text longer than an SMS interface\'s max_parts is accepted with the SMS limit named', async () => {
  const big = await t.call('POST', '/api/messages/send', { body: { to: '!921cf92a', text: 'y'.repeat(5000) } });
  assert.is(big.status, 202, big.text);
  assert.is(big.body.warnings.length, 1, big.text);
  assert.match(big.body.warnings[0], /will fail: ERR_SMS_TOO_LONG: .*at most 6 parts/);
});

test.run();
