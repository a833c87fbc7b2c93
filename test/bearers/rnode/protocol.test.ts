import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KissDecoder } from '../../../src/bearers/shared/codec/kiss.ts';
import {
  airtimeLimitValue,
  CMD,
  commandName,
  decodeDeviceFrame,
  DETECT_BURST,
  encodeChannelStats,
  encodeConfiguration,
  firmwareAtLeast,
  LEAVE,
  READY_QUERY,
  rssiByte,
  snrByte,
} from '../../../src/bearers/rnode/protocol.ts';

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0').toUpperCase()).join(' ');
const decode = (cmd: number, payload: string) => decodeDeviceFrame({ command: cmd, payload: hex(payload) });

test('command bytes are the Framing.h values of docs/protocols/rnode.md 1.3', () => {
  assert.is(CMD.CMD_DATA, 0x00);
  assert.is(CMD.CMD_DETECT, 0x08);
  assert.is(CMD.CMD_LEAVE, 0x0a);
  assert.is(CMD.CMD_READY, 0x0f);
  assert.is(CMD.CMD_STAT_CHTM, 0x25);
  assert.is(CMD.CMD_FW_VERSION, 0x50);
  assert.is(CMD.CMD_ERROR, 0x90);
  assert.is(commandName(0x25), 'CMD_STAT_CHTM');
  assert.is(commandName(0x7e), '0x7e');
});

test('fixed host frames: detect burst, READY query, LEAVE', () => {
  assert.is(toHex(DETECT_BURST), 'C0 08 73 C0 50 00 C0 48 00 C0 49 00 C0');
  assert.is(toHex(READY_QUERY), 'C0 0F 00 C0');
  assert.is(toHex(LEAVE), 'C0 0A FF C0');
});

test('configuration run: the docs/protocols/rnode.md 1.4 examples, in Reticulum order, radio on last', () => {
  const bytes = encodeConfiguration({ frequency_hz: 869_525_000, bandwidth_hz: 125_000, tx_power_dbm: 14, sf: 8, cr: 5, st_alock: 10, lt_alock: null });
  const frames = new KissDecoder().push(bytes);
  assert.equal(
    frames.map((f) => commandName(f.command)),
    ['CMD_FREQUENCY', 'CMD_BANDWIDTH', 'CMD_TXPOWER', 'CMD_SF', 'CMD_CR', 'CMD_ST_ALOCK', 'CMD_RADIO_STATE'],
  );
  const text = toHex(bytes);
  assert.ok(text.startsWith('C0 01 33 D3 E6 08 C0 C0 02 00 01 E8 48 C0 C0 03 0E C0'), text);
  assert.ok(text.includes('C0 0B 03 E8 C0'), 'ST_ALOCK 10 % is 03 E8');
  assert.ok(text.endsWith('C0 06 01 C0'));
});

test('airtime limits are percent × 100, rounded, clamped to 0…10000', () => {
  assert.is(airtimeLimitValue(10), 1000);
  assert.is(airtimeLimitValue(1), 100);
  assert.is(airtimeLimitValue(0.29), 29);
  assert.is(airtimeLimitValue(100), 10000);
  assert.is(airtimeLimitValue(150), 10000);
  assert.is(airtimeLimitValue(-1), 0);
});

test('device frames decode to values with units', () => {
  assert.equal(decode(0x01, '33 D3 E6 08'), { type: 'frequency', hz: 869_525_000 });
  assert.equal(decode(0x02, '00 01 E8 48'), { type: 'bandwidth', hz: 125_000 });
  assert.equal(decode(0x03, '16'), { type: 'txpower', dbm: 22 });
  assert.equal(decode(0x04, '07'), { type: 'sf', sf: 7 });
  assert.equal(decode(0x05, '05'), { type: 'cr', cr: 5 });
  assert.equal(decode(0x06, '01'), { type: 'radio_state', on: true });
  assert.equal(decode(0x08, '46'), { type: 'detect', ok: true });
  assert.equal(decode(0x08, '00'), { type: 'detect', ok: false });
  assert.equal(decode(0x0b, '03 E8'), { type: 'st_alock', percent: 10 });
  assert.equal(decode(0x0c, '00 64'), { type: 'lt_alock', percent: 1 });
  assert.equal(decode(0x0f, '01'), { type: 'ready', room: true });
  assert.equal(decode(0x0f, '00'), { type: 'ready', room: false });
  assert.equal(decode(0x22, '00 00 01 02'), { type: 'stat_tx', packets: 258 });
  assert.equal(decode(0x50, '01 56'), { type: 'fw_version', major: 1, minor: 86 });
  assert.equal(decode(0x48, '80'), { type: 'platform', id: 0x80, name: 'ESP32' });
  assert.equal(decode(0x49, '71'), { type: 'mcu', id: 0x71, name: 'nRF52' });
  assert.equal(decode(0x29, '8C'), { type: 'stat_temp', celsius: 20 });
  assert.equal(decode(0x55, 'F8'), { type: 'reset' });
});

test('RSSI is the byte minus 157; SNR is a signed byte in quarter dB', () => {
  assert.equal(decode(0x23, '3C'), { type: 'stat_rssi', dbm: 60 - 157 });
  assert.equal(decode(0x24, '1A'), { type: 'stat_snr', db: 6.5 });
  assert.equal(decode(0x24, 'F6'), { type: 'stat_snr', db: -2.5 });
  assert.is(rssiByte(-97), 60);
  assert.is(snrByte(-2.5), 0xf6);
  assert.is(snrByte(6.5), 0x1a);
});

test('STAT_CHTM: 11 bytes, percentages ×100 and dBm + 157; FF interference is none', () => {
  const m = decode(0x25, '01 F4 00 0A 0B B8 00 64 3C 28 FF');
  assert.equal(m, {
    type: 'stat_chtm',
    airtime_short_pct: 5,
    airtime_long_pct: 0.1,
    channel_load_short_pct: 30,
    channel_load_long_pct: 1,
    current_rssi_dbm: -97,
    noise_floor_dbm: -117,
    interference_dbm: null,
  });
  assert.is(toHex(encodeChannelStats(m as never)), '01 F4 00 0A 0B B8 00 64 3C 28 FF');
  const eight = decode(0x25, '01 F4 00 0A 0B B8 00 64');
  assert.is((eight as { current_rssi_dbm: unknown }).current_rssi_dbm, null);
});

test('ERROR codes: names, and which ones are fatal', () => {
  const e = (code: string) => decode(0x90, code) as { name: string; fatal: boolean };
  assert.equal([e('01').name, e('01').fatal], ['ERROR_INITRADIO', true]);
  assert.equal([e('02').name, e('02').fatal], ['ERROR_TXFAILED', true]);
  assert.equal([e('04').name, e('04').fatal], ['ERROR_QUEUE_FULL', false]);
  assert.equal([e('05').name, e('05').fatal], ['ERROR_MEMORY_LOW', false]);
  assert.equal([e('06').name, e('06').fatal], ['ERROR_MODEM_TIMEOUT', false]);
  // Reticulum treats unknown codes like 01 and 02.
  assert.equal([e('7F').name, e('7F').fatal], ['ERROR_UNKNOWN', true]);
});

test('bad input: an unknown command is reported as unknown, a wrong size as malformed', () => {
  assert.equal(decode(0x7e, '01 02'), { type: 'unknown', command: 0x7e, payload: hex('01 02') });
  const m = decode(0x01, '33 D3 E6');
  assert.is(m.type, 'malformed');
  assert.match((m as { reason: string }).reason, /3 bytes, expected 4/);
  assert.match((decode(0x25, '01 02 03') as { reason: string }).reason, /expected 8 or 11/);
  assert.is(decode(0x00, '').type, 'malformed');
  assert.is(decode(0x55, '00').type, 'malformed');
});

test('firmware version check: 1.52 and later pass', () => {
  assert.ok(firmwareAtLeast({ major: 1, minor: 52 }));
  assert.ok(firmwareAtLeast({ major: 1, minor: 86 }));
  assert.ok(firmwareAtLeast({ major: 2, minor: 0 }));
  assert.not.ok(firmwareAtLeast({ major: 1, minor: 51 }));
  assert.not.ok(firmwareAtLeast({ major: 0, minor: 99 }));
});

test.run();
