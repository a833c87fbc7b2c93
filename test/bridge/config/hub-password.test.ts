import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { brokerMoved } from '../../../src/bridge/config/hub-password.ts';
import { REDACTION_MARKER } from '../../../src/bridge/config/secrets.ts';
import { type Harness, startHarness } from './harness.ts';

// Issue 15 item 4: an admin cannot read hub.password, but could change hub.mqtt_url and so have
// the bridge send the stored password to a broker of their choice. Moving the broker without
// giving the password again clears it.

async function withHarness(fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await startHarness();
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const HUB = { enabled: true, mqtt_url: 'mqtts://hub.example.org:8883', tenant: 'acme', username: 'ridge', password: 's3cret' };
const password = (h: Harness) => (h.config.section('hub') as { password: string | null }).password;
const writeHub = (h: Harness, key: string, settings: Record<string, unknown>) => h.call('POST', '/api/config/module', { key, body: { section: 'hub', settings } });

test('an admin moving the broker to another host or port clears the stored password', () =>
  withHarness(async (h) => {
    for (const url of ['mqtts://evil.example.net:8883', 'mqtts://hub.example.org:9999', 'mqtt://hub.example.org:8883']) {
      assert.is((await writeHub(h, h.keys.owner, HUB)).status, 200);
      assert.is(password(h), 's3cret');
      const moved = await writeHub(h, h.keys.admin, { mqtt_url: url });
      assert.is(moved.status, 200, url);
      assert.is(moved.body.settings.password, null, `${url}: the answer shows no password`);
      assert.is(password(h), null, `${url}: the stored password is gone`);
      assert.ok(h.logLines.some((l) => l.includes('config_hub_password_cleared')), 'the clearing is logged');
    }
  }));

test('the marker written back with a new broker does not keep the password either', () =>
  withHarness(async (h) => {
    await writeHub(h, h.keys.owner, HUB);
    const read = (await h.call('GET', '/api/config/hub', { key: h.keys.admin })).body;
    assert.is(read.password, REDACTION_MARKER);
    assert.is((await writeHub(h, h.keys.admin, { ...read, mqtt_url: 'mqtts://evil.example.net' })).status, 200);
    assert.is(password(h), null);
  }));

test('the password stays for the same broker, and a new broker with the password given keeps that one', () =>
  withHarness(async (h) => {
    await writeHub(h, h.keys.owner, HUB);
    // Same host and port, written differently (host case, the default port spelled out).
    await writeHub(h, h.keys.admin, { mqtt_url: 'mqtts://HUB.example.org', username: 'ridge2' });
    assert.is(password(h), 's3cret');
    await writeHub(h, h.keys.admin, { tenant: 'acme2', password: REDACTION_MARKER });
    assert.is(password(h), 's3cret');
    // TLS added on the same host and port: not a move.
    await writeHub(h, h.keys.owner, { ...HUB, mqtt_url: 'mqtt://hub.example.org:8883' });
    await writeHub(h, h.keys.admin, { mqtt_url: 'mqtts://hub.example.org:8883' });
    assert.is(password(h), 's3cret');
    await writeHub(h, h.keys.owner, { mqtt_url: 'mqtts://other.example.org', password: 'n3w' });
    assert.is(password(h), 'n3w');
  }));

test('an import (and its diff) that moves the broker without the password clears it', () =>
  withHarness(async (h) => {
    await writeHub(h, h.keys.owner, HUB);
    const moved = h.config.checkSections({ hub: { ...HUB, mqtt_url: 'mqtts://evil.example.net', password: REDACTION_MARKER } }, 'body');
    assert.ok(moved.ok);
    if (moved.ok) assert.is(moved.value.hub.password, null);
    const same = h.config.checkSections({ hub: { ...HUB, password: REDACTION_MARKER } }, 'body');
    if (same.ok) assert.is(same.value.hub.password, 's3cret');
    else assert.unreachable('refused');
    const given = h.config.checkSections({ hub: { ...HUB, mqtt_url: 'mqtts://new.example.net', password: 'g1ven' } }, 'body');
    if (given.ok) assert.is(given.value.hub.password, 'g1ven');
    else assert.unreachable('refused');
  }));

test('brokerMoved', () => {
  assert.not.ok(brokerMoved('mqtt://a:1883', 'mqtt://A'));
  assert.not.ok(brokerMoved('mqtt://a', null), 'no broker: nothing is sent anywhere');
  assert.ok(brokerMoved(null, 'mqtt://a'), 'a password stored before any broker was named is not sent to the first one named');
  assert.ok(brokerMoved('mqtt://a', 'mqtt://b'));
  assert.ok(brokerMoved('mqtt://a', 'mqtt://a:1884'));
  assert.ok(brokerMoved('mqtts://a:1883', 'mqtt://a:1883'), 'TLS dropped');
  assert.not.ok(brokerMoved('mqtt://a:8883', 'mqtts://a'), 'TLS added');
});

test.run();
