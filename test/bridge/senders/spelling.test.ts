import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { expectOk } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createSim } from '../../helpers/routing.ts';

// One sender, many spellings (issue 17 review): `!beef`, `0xBEEF`, `48879` and `!0000beef` are
// one Meshtastic node; `+49 151 …`, `0049151…` and `+49151…` one phone number. The policy,
// the counters, the buckets and block / unblock / reset / get all use one canonical form.

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
const meshHeard = async (from: string) => (await ok('POST', '/api/messages/simulate-mesh-rx', { interface: 'mesh-0', from, text: 'hi' })).message;
const smsHeard = (from: string) => {
  const [r] = t.bridge.services.pipeline.ingest({ direction: 'inbound', interfaceId: smsId, from, to: 'modem', channel: null, kind: 'text', text: 'hi', payload: null });
  return r.message;
};

test('setup', async () => {
  await createSim(t.call, 'mesh-0', { device: 'sim://spelling-a' });
  await createSim(t.call, 'mesh-1', { device: 'sim://spelling-b' });
  smsId = (await ok('POST', '/api/interfaces', { name: 'sms-0', kind: 'sms', settings: {} })).id;
  await ok('POST', '/api/access-rules', { name: 'relay', match: { direction: 'inbound' }, action: 'forward', destinations: [{ interface: 'mesh-1', to: '^all' }] });
});

test('a node blocked as !beef is blocked when heard as !0000beef; 0xBEEF and 48879 are the same node', async () => {
  await ok('POST', '/api/senders/!beef/block');
  assert.is((await meshHeard('!0000beef')).action, 'drop');
  assert.is((await meshHeard('0xBEEF')).action, 'drop');
  // Blocking it again in another spelling adds nothing; the counters are one row.
  assert.equal((await ok('POST', '/api/senders/48879/block')).blocklist, ['!beef']);
  const row = await ok('GET', '/api/senders/0xbeef');
  assert.equal([row.address, row.messages_in, row.blocked], ['!0000beef', 2, 2]);
  assert.equal((await ok('GET', '/api/senders/48879')).address, '!0000beef');
  // Unblocking any spelling removes it.
  assert.equal((await ok('POST', '/api/senders/!0000BEEF/unblock')).blocklist, []);
  assert.is((await meshHeard('!0000beef')).action, 'forward');
  // A bare decimal entry stands for the node too.
  await ok('PUT', '/api/senders/policy', { blocklist: ['48879'] });
  assert.is((await meshHeard('!0000beef')).action, 'drop');
  await ok('PUT', '/api/senders/policy', { blocklist: [] });
});

test('a phone number in any spelling is one sender: blocklist, allowlist through a contact, buckets, reset', async () => {
  await ok('PUT', '/api/senders/policy', { blocklist: ['+49 151 1234 5678'] });
  assert.is(smsHeard('+4915112345678').action, 'drop');
  assert.is(smsHeard('004915112345678').action, 'drop');
  assert.equal((await ok('POST', '/api/senders/004915112345678/unblock')).blocklist, []);
  await ok('POST', '/api/contacts', { name: 'duty', addresses: { sms: '004915112345678' } });
  await ok('PUT', '/api/senders/policy', { allowlist: ['@duty'], limits: [{ kinds: ['meshtastic', 'sim'], per_hour: 1, burst: 1 }] });
  assert.is(smsHeard('+4915112345678').action, 'forward', 'on the allowlist through the contact');
  assert.is(smsHeard('+49 151 12345678').action, 'store', 'the same bucket, whatever the spelling');
  const row = await ok('GET', `/api/senders/${encodeURIComponent('0049 151 1234 5678')}`);
  assert.equal([row.address, row.messages_in, row.forwards, row.limited], ['+4915112345678', 4, 1, 1]);
  assert.equal(await ok('POST', `/api/senders/${encodeURIComponent('+49 151 1234 5678')}/reset`), { address: '+4915112345678', buckets_reset: 1 });
  assert.is(smsHeard('+4915112345678').action, 'forward');
});

test.run();
