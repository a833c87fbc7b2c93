import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule, createSim } from '../../helpers/routing.ts';

// Answers people read name interfaces, with the id beside the name for programs: the reason a
// rule decided, the rule views, and a GET body written back with PUT keeps working.

let t: TestBridge;
let meshA: any;
let out: any;
test.before(async () => {
  t = await startTestBridge();
  meshA = await createSim(t.call, 'mesh-a');
  out = await createSim(t.call, 'out-b');
});
test.after(async () => {
  await t.stop();
});

test('the reason of a decision names the interface the message came in on, with its id', async () => {
  await createRule(t.call, 'mesh-a-to-sms', {
    match: { direction: 'inbound', interfaces: ['mesh-a'] }, action: 'forward', destinations: [{ interface: 'out-b', to: '!12345678' }],
  });
  const r = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { interface: 'mesh-a', from: '!0000beef', text: 'hi' } });
  assert.is(r.status, 202, r.text);
  assert.is(r.body.message.decision.reason, `rule 'mesh-a-to-sms' matched: direction inbound, interface mesh-a (${meshA.id})`);

  // The rule lists show the filter's interfaces by id with their names beside; PUT takes it back.
  const listed = (await t.call('GET', '/api/access-rules')).body.items.find((x: any) => x.name === 'mesh-a-to-sms');
  assert.equal(listed.match, { direction: 'inbound', interfaces: [meshA.id], interface_names: ['mesh-a'] });
  const put = await t.call('PUT', `/api/access-rules/${listed.id}`, { body: listed });
  assert.is(put.status, 200, put.text);
  assert.equal(put.body.match, listed.match);
  const typo = await t.call('POST', '/api/access-rules', { body: { name: 'by-names', match: { interface_names: ['mesh-a'] }, schedule: null, action: 'store' } });
  assert.is(typo.status, 400, 'a new rule cannot filter by interface_names (it would be ignored): interfaces takes names');
});

test('rule views show each destination interface\'s name beside its id; the GET body goes back with PUT', async () => {
  const rule = await createRule(t.call, 'names-view', {
    action: 'forward',
    destinations: [{ interface: 'out-b', to: '!1' }, { fallback: [{ interface: out.id, to: '!2' }, { interface: 'mesh-a', to: '!3' }] }],
  });
  const expected = [
    { interface: out.id, interface_name: 'out-b', to: '!1' },
    { fallback: [{ interface: out.id, interface_name: 'out-b', to: '!2' }, { interface: meshA.id, interface_name: 'mesh-a', to: '!3' }] },
  ];
  assert.equal(rule.destinations, expected);
  const list = await t.call('GET', '/api/access-rules');
  assert.equal(list.body.items.find((r: any) => r.id === rule.id).destinations, expected);

  const put = await t.call('PUT', `/api/access-rules/${rule.id}`, { body: rule });
  assert.is(put.status, 200, put.text);
  assert.equal(put.body.destinations, expected);
  // The names are shown, not stored: a renamed interface shows its new name.
  const renamed = await t.call('PATCH', `/api/interfaces/${out.id}`, { body: { name: 'out-c' }, headers: { 'content-type': 'application/merge-patch+json' } });
  assert.is(renamed.status, 200, renamed.text);
  const after = await t.call('GET', `/api/access-rules/${rule.id}`);
  assert.is(after.body.destinations[0].interface_name, 'out-c');
});

test.run();
