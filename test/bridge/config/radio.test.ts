import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { radioWarnings } from '../../../src/bridge/config/radio.ts';
import { defaultSection } from '../../../src/bridge/config/sections.ts';

const base = { ...defaultSection('radio'), region: 'EU_868' as const };

test('against a report: only region, preset and slot differences warn, naming both values', () => {
  const reported = { region: 'EU_868' as const, modem_preset: 'LONG_FAST' as const, channel_num: 0, hop_limit: 3, tx_power: 27 };
  assert.equal(radioWarnings({ ...base, hop_limit: 7, tx_power: 10 }, base, reported), []);
  const w = radioWarnings({ ...base, region: 'US', channel_num: 5 }, base, reported);
  assert.is(w.length, 1);
  assert.is(w[0].code, 'RADIO_DIFFERS_FROM_MESH');
  assert.equal(w[0].fields, ['region', 'channel_num']);
  assert.match(w[0].message, 'region US (the mesh radio reports EU_868)');
  // A partial report compares only what it carries.
  assert.equal(radioWarnings({ ...base, modem_preset: 'SHORT_FAST' }, base, { region: 'EU_868' }), []);
});

test('without a report: a change of the mesh identity says it could not be checked; nothing else warns', () => {
  assert.equal(radioWarnings(base, base, null), []);
  assert.equal(radioWarnings({ ...base, hop_limit: 1 }, base, null), []);
  const w = radioWarnings({ ...base, modem_preset: 'MEDIUM_FAST' }, base, null);
  assert.equal(w.map((x) => [x.code, x.fields]), [['RADIO_NOT_REPORTED', ['modem_preset']]]);
});

test.run();
