import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createSim } from '../../helpers/routing.ts';

// The senders policy's @names (issue 17 review): expanded once and kept until a contact, a group
// or the policy changes, not read from the database for every entry of every heard message.

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
let t: TestBridge;
test.before(async () => {
  t = await startTestBridge({ clock });
});
test.after(async () => {
  await t.stop();
});

const ok = (method: string, path: string, body?: unknown) => expectOk(t.call, method, path, body);
const heard = async (from: string) => (await ok('POST', '/api/messages/simulate-mesh-rx', { interface: 'mesh-0', from, text: 'hi' })).message.action;

test('heard messages do not read the books again; a change to a group is seen at once', async () => {
  await createSim(t.call, 'mesh-0', { device: 'sim://expansions' });
  await ok('POST', '/api/access-rules', { name: 'keep', match: { direction: 'inbound' }, action: 'store' });
  await ok('POST', '/api/object-groups', { name: 'pranks', members: ['!0000bad1'] });
  await ok('POST', '/api/contacts', { name: 'team', addresses: { mesh: '!000000a1' } });
  await ok('PUT', '/api/senders/policy', { blocklist: ['@pranks'], allowlist: ['@team', '@pranks'] });
  const { groups, contacts } = t.bridge.services;
  let finds = 0;
  for (const book of [groups.store, contacts.store] as any[]) {
    const find = book.find.bind(book);
    book.find = (ref: string) => {
      finds++;
      return find(ref);
    };
  }
  assert.is(await heard('!000000a1'), 'store');
  const first = finds;
  for (let i = 0; i < 5; i++) assert.is(await heard('!000000a1'), 'store');
  assert.is(await heard('!0000bad1'), 'drop');
  assert.is(finds, first, `${finds - first} book reads for 6 more heard messages`);
  // A group changes: the next message sees it.
  const g = await ok('GET', '/api/object-groups/pranks');
  await ok('PUT', '/api/object-groups/pranks', { ...g, members: ['!0000bad2'] });
  assert.is(await heard('!0000bad1'), 'drop', 'not on the allowlist any more');
  assert.match((await ok('POST', '/api/messages/simulate-mesh-rx', { interface: 'mesh-0', from: '!0000bad1', text: 'x' })).message.decision.reason, /not on the allowlist/);
  assert.match((await ok('POST', '/api/messages/simulate-mesh-rx', { interface: 'mesh-0', from: '!0000bad2', text: 'x' })).message.decision.reason, /on the blocklist \(through @pranks\)/);
  // So does a contact.
  const c = await ok('GET', '/api/contacts/team');
  await ok('PUT', '/api/contacts/team', { ...c, addresses: { mesh: '!000000a2' } });
  assert.is(await heard('!000000a1'), 'drop');
  assert.is(await heard('!000000a2'), 'store');
});

test.run();
