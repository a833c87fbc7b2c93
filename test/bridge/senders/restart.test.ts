import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';

// Sender limits survive a restart (issue 17, docs/senders.md): the buckets and counters are
// rows written with each message, so a bridge started again on the same database still holds
// a sender at its limit, and a blocked node stays blocked.

const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
const dir = mkdtempSync(join(tmpdir(), 'fb-senders-'));
let t: TestBridge | undefined;
test.after(async () => {
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const heard = async (from: string) => {
  const r = await t!.call('POST', '/api/messages/simulate-mesh-rx', { body: { interface: 'mesh-0', from, text: 'hello' } });
  assert.is(r.status, 202, r.text);
  return r.body;
};

test('a sender at its limit is still limited after a restart; a blocked one still blocked; counters kept', async () => {
  t = await startTestBridge({ clock, dir });
  const ok = async (method: string, path: string, body: unknown) => assert.ok((await t!.call(method, path, { body })).status < 300);
  await ok('POST', '/api/interfaces', { name: 'mesh-0', kind: 'sim', settings: {}, device: 'sim://restart' });
  await ok('POST', '/api/interfaces', { name: 'sat', kind: 'iridium', settings: {} });
  await ok('POST', '/api/access-rules', { name: 'to-sat', match: {}, action: 'forward', destinations: [{ interface: 'sat', to: 'gateway' }] });
  await ok('PUT', '/api/senders/policy', { limits: [{ kinds: ['iridium'], per_hour: 1, burst: 1 }], blocklist: ['!bad'] });
  assert.is((await heard('!a1')).message.action, 'forward');
  assert.is((await heard('!a1')).message.action, 'store');
  await t.stop();

  t = await startTestBridge({ clock, dir });
  const again = await heard('!a1');
  assert.is(again.message.action, 'store', 'the spent bucket came back with the database');
  assert.match(again.message.decision.reason, /over its limit of 1 forwards per hour to iridium/);
  assert.is((await heard('!bad')).message.action, 'drop');
  const sender = (await t.call('GET', '/api/senders/!a1')).body;
  assert.equal([sender.messages_in, sender.forwards, sender.limited], [3, 1, 2]);
  clock.advance(3_600_000);
  assert.is((await heard('!a1')).message.action, 'forward', 'an hour later the bucket holds one forward again');
});

test.run();
