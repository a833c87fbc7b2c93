import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeAddress, encodeSemiOctets, encodeSmsc, normalizeNumber, readAddress, readSmsc } from '../../../../src/bearers/sms/codec/address.ts';
import { OctetReader, decodeWith } from '../../../../src/bearers/sms/codec/octets.ts';
import { fromHex, toHex } from './helpers.ts';

const address = (hex: string) => decodeWith(() => readAddress(new OctetReader(fromHex(hex)), 'TP-OA'));
const smsc = (hex: string) => decodeWith(() => readSmsc(new OctetReader(fromHex(hex))));

test('semi-octets: digits swapped in pairs, an odd count padded with F (23.040 9.1.2.3)', () => {
  assert.is(toHex(encodeSemiOctets('31641600986')), '1346610089F6');
  assert.is(toHex(encodeSemiOctets('1234')), '2143');
  assert.is(toHex(encodeSemiOctets('*#')), 'BA'); // * = A, # = B
  assert.is(toHex(encodeSemiOctets('')), '');
  assert.throws(() => encodeSemiOctets('12x'), RangeError);
});

test('international number: length 0B (11 digits), type 91, swapped digits', () => {
  assert.is(toHex(encodeAddress('+31641600986')), '0B911346610089F6');
  assert.equal(address('0B911346610089F6'), { ok: true, value: { address: '+31641600986', kind: 'international', typeOfAddress: 0x91 } });
});

test('number without + is sent as unknown/ISDN (81); national TON (A1) decodes without +', () => {
  assert.is(toHex(encodeAddress('0151234567')), '0A811015325476');
  assert.equal(address('0A811015325476'), { ok: true, value: { address: '0151234567', kind: 'unknown', typeOfAddress: 0x81 } });
  assert.equal(address('04A12143'), { ok: true, value: { address: '1234', kind: 'national', typeOfAddress: 0xa1 } });
  assert.is(toHex(encodeAddress('12345')), '05812143F5'); // short code: 5 digits, F pad
});

test('alphanumeric sender: TON 5 (D0), GSM-7 packed, length in semi-octets', () => {
  // "InfoSMS": 7 septets = 49 bits -> 13 semi-octets (0D) in 7 octets.
  // I 1001001, n 1101110, f 1100110, o 1101111, S 1010011, M 1001101, S 1010011, packed LSB first:
  // 0 1001001=49  10 110111=B7  111 11001=F9  0011 1101=3D  01101 101=6D  010011 10=4E  0000000 1=01
  assert.is(toHex(encodeAddress('InfoSMS')), '0DD049B7F93D6D4E01');
  assert.equal(address('0DD049B7F93D6D4E01'), { ok: true, value: { address: 'InfoSMS', kind: 'alphanumeric', typeOfAddress: 0xd0 } });
  // 11 septets is the most that fits 20 semi-octets.
  assert.is(toHex(encodeAddress('ABCDEFGHIJK')).slice(0, 4), '14D0');
  assert.throws(() => encodeAddress('ABCDEFGHIJKL'), RangeError);
  assert.throws(() => encodeAddress('日本'), RangeError);
  assert.throws(() => encodeAddress(''), RangeError);
});

test('alphanumeric sender with an extension character decodes through the escape', () => {
  const encoded = encodeAddress('EUR€');
  assert.equal(address(toHex(encoded)), { ok: true, value: { address: 'EUR€', kind: 'alphanumeric', typeOfAddress: 0xd0 } });
});

test('empty address (length 0) decodes as ""', () => {
  assert.equal(address('0081'), { ok: true, value: { address: '', kind: 'unknown', typeOfAddress: 0x81 } });
});

test('bad semi-octets: a filler F inside the number is an error naming its octet', () => {
  const r = address('0491F121');
  assert.equal(r, { ok: false, error: 'TP-OA: filler semi-octet F inside the number (digit 2 of 4) at octet 2' });
});

test('semi-octets A-E read as * # a b c', () => {
  // "*#abc1": pairs (* #) -> BA, (a b) -> DC, (c 1) -> 1E
  assert.equal(address('0681BADC1E'), { ok: true, value: { address: '*#abc1', kind: 'unknown', typeOfAddress: 0x81 } });
  assert.is(toHex(encodeAddress('*#1')), '0381BAF1');
});

test('the filler nibble of an odd count is not checked', () => {
  assert.equal(address('0391214'.concat('3')), { ok: true, value: { address: '+123', kind: 'international', typeOfAddress: 0x91 } });
});

test('address length past 20 semi-octets, or past the PDU, is an error', () => {
  assert.equal(address('15911111111111111111111'), { ok: false, error: 'TP-OA length 21 exceeds 20 semi-octets at octet 0' });
  assert.equal(address('0B91134661'), { ok: false, error: 'PDU ends inside TP-OA: 6 octets needed, 3 left at octet 2' });
  assert.equal(address('0B'), { ok: false, error: 'PDU ends before TP-OA type of address at octet 1' });
  assert.equal(address(''), { ok: false, error: 'PDU ends before TP-OA length at octet 0' });
});

test('SMSC prefix: 00 is the modem\'s SMSC; otherwise octet length, type, digits', () => {
  assert.is(toHex(encodeSmsc(null)), '00');
  assert.is(toHex(encodeSmsc('+49171076000')), '07919471016700F0');
  assert.is(toHex(encodeSmsc('+491710760000')), '079194710167000' + '0');
  assert.equal(smsc('00'), { ok: true, value: null });
  assert.equal(smsc('07919471016700F0'), { ok: true, value: { address: '+49171076000', kind: 'international', typeOfAddress: 0x91 } });
  assert.equal(smsc('0C91'), { ok: false, error: 'SMSC length 12 exceeds 11 octets at octet 0' });
  assert.equal(smsc('079194'), { ok: false, error: 'PDU ends inside SMSC: 6 octets needed, 1 left at octet 2' });
  assert.throws(() => encodeSmsc('+49 171'), RangeError);
  assert.throws(() => encodeSmsc('+' + '1'.repeat(21)), RangeError);
});

test('normalizeNumber: E.164 from what people write', () => {
  const ok = (number: string, kind = 'e164') => ({ ok: true, number, kind });
  assert.equal(normalizeNumber('+49 151 2345 6789'), ok('+4915123456789'));
  assert.equal(normalizeNumber('0049 (0)151-2345/6789'), ok('+4915123456789'));
  assert.equal(normalizeNumber('+49 (0)151 23456789'), ok('+4915123456789'));
  assert.equal(normalizeNumber('0151 23456789', '49'), ok('+4915123456789'));
  assert.equal(normalizeNumber('0151 23456789', '+49'), ok('+4915123456789'));
  assert.equal(normalizeNumber('0151 23456789', 49), ok('+4915123456789'));
  assert.equal(normalizeNumber('  +1 (555) 010-9999 '), ok('+15550109999'));
  assert.equal(normalizeNumber('22022', '49'), ok('22022', 'short'));
  assert.equal(normalizeNumber('112'), ok('112', 'short'));
});

test('normalizeNumber: null with a reason', () => {
  const reason = (raw: string, cc?: string) => {
    const r = normalizeNumber(raw, cc);
    return r.ok ? `ok ${r.number}` : r.reason;
  };
  assert.match(reason('0151 23456789'), /national number \(leading 0\) and no default country code/);
  assert.match(reason('15123456789'), /no country code/);
  assert.match(reason(''), /empty/);
  assert.match(reason('+49 abc'), /characters other than digits/);
  assert.match(reason('++49151'), /characters other than digits/);
  assert.match(reason('+0151234567'), /never starts with 0/);
  assert.match(reason('000151234567'), /never starts with 0/);
  assert.match(reason('+49151'), /too short/);
  assert.match(reason('+1234567890123456'), /too long/);
  assert.equal(normalizeNumber(42 as unknown as string), { ok: false, reason: 'not a string' });
  assert.throws(() => normalizeNumber('0151', '049'), RangeError);
  assert.throws(() => normalizeNumber('0151', '1234'), RangeError);
});

test.run();
