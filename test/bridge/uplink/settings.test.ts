import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mintEnrollmentToken } from '../../../src/hubwire/credentials.ts';
import { uplinkEnv } from '../../../src/bridge/uplink/service.ts';
import { StartupError } from '../../../src/lib/errors.ts';
import { startTestBridge } from '../../helpers/bridge.ts';

// The broker URL is shown to viewer keys, exported and logged: credentials must never ride in
// it, and only URLs the uplink can really use are accepted (review finding: ws:// passed the
// API and then silently left the uplink off).

test('hub.mqtt_url with user:password@ or a ws:// scheme is refused (400), naming the field, without echoing the password', async () => {
  const t = await startTestBridge();
  try {
    for (const url of ['mqtt://alice:S3cretPw@broker.example:1883', 'ws://broker.example', 'wss://broker.example/mqtt', 'http://broker.example', 'mqtt://broker.example/path']) {
      const r = await t.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: url, tenant: 'acme' } } });
      assert.is(r.status, 400, url);
      assert.ok(r.body.errors.some((e: { path: string }) => e.path === 'body.settings.mqtt_url'), url);
      assert.not.ok(r.text.includes('S3cretPw'), 'the password is not echoed');
    }
    const ok = await t.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: 'mqtts://broker.example', tenant: 'acme', username: 'alice', password: 'S3cretPw' } } });
    assert.is(ok.status, 200, ok.text);
    const viewer = (await t.call('POST', '/api/auth/keys', { body: { label: 'v', role: 'viewer' } })).body.key;
    const read = await t.call('GET', '/api/config/hub', { key: viewer });
    assert.not.ok(read.text.includes('S3cretPw'));
    const exported = await t.call('GET', '/api/config/export', { key: viewer });
    assert.not.ok(exported.text.includes('S3cretPw'));
  } finally {
    await t.stop();
  }
});

test('SERVICE_HUB_MQTT_URL: a bad value stops the start naming the variable, never printing the password', () => {
  assert.equal(uplinkEnv({ SERVICE_HUB_MQTT_URL: 'mqtt://broker:1883', SERVICE_HUB_TENANT: 'acme' }), { mqttUrl: 'mqtt://broker:1883', tenant: 'acme' });
  assert.equal(uplinkEnv({ SERVICE_HUB_MQTT_URL: 'none' }), { mqttUrl: 'none', tenant: undefined });
  for (const bad of ['mqtt://bob:Hunter22@broker', 'ws://broker', 'broker:1883']) {
    try {
      uplinkEnv({ SERVICE_HUB_MQTT_URL: bad });
      assert.unreachable(bad);
    } catch (e) {
      assert.instance(e, StartupError);
      assert.match((e as Error).message, /^SERVICE_HUB_MQTT_URL: /);
      assert.not.ok((e as Error).message.includes('Hunter22'));
    }
  }
  assert.throws(() => uplinkEnv({ SERVICE_HUB_TENANT: 'a/b' }), /SERVICE_HUB_TENANT/);
});

test('SERVICE_HUB_ENROLL_TOKEN: taken when it has the token shape; anything else stops the start without printing it', () => {
  const token = mintEnrollmentToken().key;
  assert.equal(uplinkEnv({ SERVICE_HUB_MQTT_URL: 'mqtt://broker:1883', SERVICE_HUB_ENROLL_TOKEN: ` ${token}\n` }), { mqttUrl: 'mqtt://broker:1883', tenant: undefined, enrollToken: token });
  for (const bad of [token.slice(0, -1), token.replace('fbe_', 'fbh_'), 'fbe_short_token', `${token} extra`]) {
    try {
      uplinkEnv({ SERVICE_HUB_ENROLL_TOKEN: bad });
      assert.unreachable(bad);
    } catch (e) {
      assert.instance(e, StartupError);
      assert.match((e as Error).message, /^SERVICE_HUB_ENROLL_TOKEN: /);
      assert.not.ok((e as Error).message.includes(bad.slice(5, 20)), 'the value is not echoed');
    }
  }
});

test('a broker without a tenant, a token or a stored enrollment: accepted, and the uplink says in the log why it stays off', async () => {
  const t = await startTestBridge();
  try {
    const r = await t.call('POST', '/api/config/module', { body: { section: 'hub', settings: { enabled: true, mqtt_url: 'mqtt://127.0.0.1:1' } } });
    assert.is(r.status, 200, r.text);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is(t.bridge.services.uplink.state(), 'off');
    assert.ok(t.logs.some((l) => l.includes('"uplink_off"') && l.includes('enrollment_token') && l.includes('"warn"')), t.logs.filter((l) => l.includes('uplink')).join('\n'));
  } finally {
    await t.stop();
  }
});

test.run();
