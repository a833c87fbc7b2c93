import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { maskUrlCredentials, maskUrlsIn } from '../../src/lib/mask-url.ts';
import { parseMqttUrl } from '../../src/hubwire/mqtt-options.ts';

// Issue 15 item 4: credentials in a URL are masked whole, whatever characters the password has.

test('the whole user information goes, cut at the last "@"', () => {
  const cases: Array<[string, string]> = [
    ['mqtt://hub:s3cr@t@broker:1883', 'mqtt://***@broker:1883'],
    ['mqtt://hub:p@ss@w@rd@broker', 'mqtt://***@broker'],
    ['mqtts://hub:pa/ss@broker:8883', 'mqtts://***@broker:8883'],
    ['mqtt://hub:12/ss@broker', 'mqtt://***@broker'],
    ['mqtt://hub:a?b#c@broker', 'mqtt://***@broker'],
    ['mqtt://only-a-token@broker', 'mqtt://***@broker'],
    ['postgres://hub:p@ss@db:5432/hub', 'postgres://***@db:5432/hub'],
    ['mqtt://broker:1883', 'mqtt://broker:1883'],
    ['not a url', 'not a url'],
  ];
  for (const [url, masked] of cases) assert.is(maskUrlCredentials(url), masked, url);
});

test('maskUrlsIn masks URLs quoted inside a message', () => {
  assert.is(maskUrlsIn('bad: "mqtt://u:p@ss@h:1" and mqtt://x:y/z@h2 end'), 'bad: "mqtt://***@h:1" and mqtt://***@h2 end');
});

test('parseMqttUrl never quotes a password in its messages', () => {
  const cases: Array<[string, string]> = [
    ['mqtt://hub:Pa/Ss@broker', 'Pa/Ss'],
    ['mqtt://hub:12/Ss@broker', '12/Ss'],
    ['http://hub:P@Ss@broker', 'P@Ss'],
    ['mqtt://hub:P@Ss@broker/path', 'P@Ss'],
  ];
  for (const [url, password] of cases) {
    try {
      parseMqttUrl(url);
      assert.unreachable(url);
    } catch (error) {
      const message = (error as Error).message;
      for (const part of [password, ...password.split(/[@/]/)]) assert.not.ok(message.includes(part), `${url} -> ${message}`);
      assert.match(message, '***@');
    }
  }
  assert.is(parseMqttUrl('mqtt://hub:p@ss@broker').password, 'p@ss', 'an "@" in the password still parses');
});

test.run();
