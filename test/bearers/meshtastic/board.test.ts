import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allowedPresets, boardOf, boardProblems, excludedModuleNames, fitBoard } from '../../../src/bearers/meshtastic/board.ts';

// What the bound board's firmware takes (docs/meshtastic.md, "What the configuration API changes
// on the device"): its version line, excluded modules, the long names it keeps.

test('the version line and the long-name limit follow the firmware version', () => {
  assert.equal([boardOf({ firmware_version: '2.7.26.54e0d8d' }).line, boardOf({ firmware_version: '2.7.26.54e0d8d' }).longNameBytes], ['2.7', 39]);
  assert.equal([boardOf({ firmware_version: '2.8.0.abc' }).line, boardOf({ firmware_version: '2.8.0.abc' }).longNameBytes], ['2.8', 24]);
  assert.is(boardOf({ firmware_version: '3.0.1' }).longNameBytes, 24);
  assert.equal([boardOf({ firmware_version: 'custom' }).line, boardOf(undefined).firmware], [null, null]);
  assert.equal(excludedModuleNames(boardOf({ excluded_modules: 0x0010 | 0x2000 })), ['RANGETEST_CONFIG', 'BLUETOOTH_CONFIG']);
  assert.is(allowedPresets(boardOf({}), 3), null, 'no map sent: nothing known');
  assert.equal(allowedPresets(boardOf({}, { groups: [{ presets: [0, 4] }], region_groups: [{ region: 3, group_index: 0 }] }), 3), ['LONG_FAST', 'MEDIUM_FAST']);
});

test('problems name the field, the limit and the firmware; a 2.7 board adds none to the schema\'s', () => {
  const b28 = boardOf({ firmware_version: '2.8.0.x', excluded_modules: 0x10 });
  assert.equal(boardProblems(b28, 'owner', { long_name: 'é'.repeat(13), short_name: 'A' }), [
    'owner.long_name is 26 bytes; the board\'s firmware 2.8.0.x keeps at most 24 bytes of UTF-8 and would cut the rest',
  ]);
  assert.equal(boardProblems(b28, 'owner', { long_name: 'x'.repeat(24) }), []);
  assert.match(boardProblems(b28, 'modules', {}, 'range_test')[0], /^modules\.range_test: the board's firmware 2\.8\.0\.x was built without this module/);
  assert.equal(boardProblems(b28, 'modules', {}, 'telemetry'), []);
  assert.equal(boardProblems(b28, 'radio', { region: 'EU_868' }), []);
  const b27 = boardOf({ firmware_version: '2.7.26' });
  assert.equal(boardProblems(b27, 'owner', { long_name: 'x'.repeat(30) }), []);
  assert.equal(boardProblems(b27, 'modules', {}, 'range_test'), []);
});

test('stored settings split into what the board takes and what is kept for another board', () => {
  const b28 = boardOf({ firmware_version: '2.8.0.x', excluded_modules: 0x10 });
  const r = fitBoard(b28, { long_name: 'x'.repeat(27), short_name: 'X' }, { range_test: { enabled: true }, telemetry: { device_telemetry_enabled: true } });
  assert.is(r.ownerFits, false);
  assert.equal(r.modules, { telemetry: { device_telemetry_enabled: true } });
  assert.equal(r.kept, { range_test: { enabled: true } });
  assert.is(r.problems.length, 2);
  assert.equal(fitBoard(boardOf({ firmware_version: '2.7.26' }), null, { range_test: { enabled: true } }), { problems: [], ownerFits: true, modules: { range_test: { enabled: true } }, kept: {} });
});

test.run();
