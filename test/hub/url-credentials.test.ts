import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { brokerUrlProblem } from '../../src/bridge/config/sections.ts';
import { readHubConfig } from '../../src/hub/config.ts';
import { startTestHub } from './helper.ts';

// Issue 15 item 4: HUB_MQTT_URL with a password containing "@" put part of the password in the
// log; every URL shown (log lines, start-up errors, the bridge's uplink checks) has its user
// information masked whole.

test('hub_listening shows HUB_MQTT_URL without any part of a password holding "@"', async () => {
  // Port 1: nothing listens; the hub serves its API while the broker is unreachable.
  const hub = await startTestHub({ mqtt: { url: 'mqtt://hub:Se@cr3t@127.0.0.1:1', shared: false, clientId: 'mask-test', reconnectMs: 60_000 } });
  try {
    const line = hub.logs.find((l) => l.includes('hub_listening'));
    assert.ok(line, 'hub_listening was logged');
    assert.is(JSON.parse(line!).mqtt, 'mqtt://***@127.0.0.1:1');
    for (const l of hub.logs) for (const part of ['Se@cr3t', 'cr3t', 'Se@']) assert.not.ok(l.includes(part), l);
  } finally {
    await hub.stop();
  }
});

test('a refused HUB_MQTT_URL or HUB_DATABASE_URL is quoted with its credentials masked', () => {
  const refused = (env: NodeJS.ProcessEnv) => {
    try {
      readHubConfig(env);
    } catch (error) {
      return (error as Error).message;
    }
    assert.unreachable(JSON.stringify(env));
  };
  const mqtt = refused({ HUB_MQTT_URL: 'mqtt://hub:Pa@ss/W0rd@broker:1883' })!;
  assert.match(mqtt, 'HUB_MQTT_URL');
  assert.match(mqtt, '***@broker:1883');
  for (const part of ['Pa@ss', 'W0rd', 'ss/']) assert.not.ok(mqtt.includes(part), mqtt);
  const db = refused({ HUB_DATABASE_URL: 'postgres://hub:Pa@ss W0rd@db:5432/hub' })!;
  assert.match(db, 'HUB_DATABASE_URL');
  for (const part of ['Pa@ss', 'W0rd']) assert.not.ok(db.includes(part), db);
});

test('the bridge\'s broker URL check never repeats a password', () => {
  for (const [url, parts] of [['mqtt://u:Pa/Ss@broker', ['Pa/Ss', 'Ss@']], ['mqtt://u:12/Ss@broker', ['12/Ss', 'Ss@']], ['mqtt://u:P@Ss@broker', ['P@Ss', 'Ss@']]] as const) {
    const problem = brokerUrlProblem(url);
    assert.ok(problem, url);
    for (const part of parts) assert.not.ok(problem!.includes(part), `${url} -> ${problem}`);
  }
});

test.run();
