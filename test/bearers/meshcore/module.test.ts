import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { meshcoreDriver } from '../../../src/bearers/meshcore/index.ts';
import { meshcoreStats } from '../../../src/bearers/meshcore/stats.ts';

// The driver module (not yet listed in bearers/drivers.ts): its settings, contact address and
// stats view.

test('settings: defaults, and every bad field reported at once', () => {
  assert.equal(meshcoreDriver.settings.parse({}), { channel: 0, command_timeout_s: 5, ack_margin_pct: 120, ack_timeout_max_s: 60, data_type: 0xffff, app_name: 'fieldbridge' });
  const bad = meshcoreDriver.settings.safeParse({ channel: 40, ack_margin_pct: 50, data_type: 0, extra: 1 });
  assert.not.ok(bad.success);
  const messages = bad.error!.issues.map((i) => i.message).join('\n');
  assert.match(messages, /channel must be 0 to 39/);
  assert.match(messages, /ack_margin_pct must be 100 to 1000/);
  assert.match(messages, /data_type must be 1 to 65535/);
  assert.ok(bad.error!.issues.some((i) => i.code === 'unrecognized_keys'));
});

test('contact address: a public key or a prefix of at least 6 bytes, in hex', () => {
  const schema = meshcoreDriver.contact.schema!;
  assert.ok(schema.safeParse('a1b2c3d4e5f6').success);
  assert.ok(schema.safeParse('00'.repeat(32)).success);
  assert.not.ok(schema.safeParse('a1b2c3').success);
  assert.not.ok(schema.safeParse('!a1b2c3d4').success);
});

test('stats view: null facts and zero counts before the radio said anything', () => {
  const view = meshcoreStats.read({}, {});
  assert.is(view.model, null);
  assert.is(view.contacts, 0);
  assert.equal(view.failed_by_reason, {});
  assert.ok(meshcoreStats.schema.safeParse(view).success);
});

test.run();
