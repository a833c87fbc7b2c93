import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GSM7_DEFAULT_ALPHABET, GSM7_EXTENSION_TABLE, isGsm7 } from '../../../../src/bearers/shared/codec/gsm7.ts';
import { decodeDeliver, encodeDeliver } from '../../../../src/bearers/sms/codec/deliver.ts';
import { planData, planMessage, type MessagePlan, type PlanOptions } from '../../../../src/bearers/sms/codec/split.ts';
import { decodeSubmit, encodeSubmit } from '../../../../src/bearers/sms/codec/submit.ts';
import { rng, toHex } from './helpers.ts';

function plan(text: string, options?: PlanOptions): MessagePlan {
  const p = planMessage(text, options);
  if (!p.ok) throw new Error(p.error);
  return p.plan;
}
const texts = (p: MessagePlan) => p.parts.map((x) => x.text);

test('part counts at the GSM-7 boundaries: 160/161, 153x2/307 (docs/protocols/sms.md 4.4)', () => {
  const table: [number, number][] = [[0, 1], [1, 1], [160, 1], [161, 2], [306, 2], [307, 3], [459, 3], [460, 4]];
  for (const [n, parts] of table) {
    const p = plan('a'.repeat(n));
    assert.is(p.encoding, 'gsm7');
    assert.is(p.parts.length, parts, `${n} characters`);
  }
  const p161 = plan('a'.repeat(161));
  assert.equal(p161.parts.map((x) => x.udl), [160, 15]); // 7 header septets + 153, 7 + 8
  assert.equal(p161.parts.map((x) => x.userData.length), [140, 14]);
});

test('part counts at the UCS-2 boundaries: 70/71, 67x2/135', () => {
  const table: [number, number][] = [[70, 1], [71, 2], [134, 2], [135, 3]];
  for (const [n, parts] of table) {
    const p = plan('ж'.repeat(n));
    assert.is(p.encoding, 'ucs2');
    assert.is(p.parts.length, parts, `${n} characters`);
  }
  assert.equal(plan('ж'.repeat(71)).parts.map((x) => x.udl), [140, 14]);
});

test('16-bit reference: 152 GSM-7 septets, 66 UCS-2 characters, 133 octets a part', () => {
  assert.equal(plan('a'.repeat(304), { referenceBits: 16 }).parts.length, 2);
  assert.equal(plan('a'.repeat(305), { referenceBits: 16 }).parts.length, 3);
  assert.equal(plan('ж'.repeat(132), { referenceBits: 16 }).parts.length, 2);
  assert.equal(plan('ж'.repeat(133), { referenceBits: 16 }).parts.length, 3);
  const p = planData(new Uint8Array(266), { referenceBits: 16, reference: 0xbeef });
  assert.ok(p.ok && p.plan.parts.length === 2 && toHex(p.plan.parts[0].userData.subarray(0, 7)) === '060804BEEF0201');
});

test('extension characters count two septets and never straddle a part boundary', () => {
  assert.is(plan('a'.repeat(158) + '€').parts.length, 1); // 160 septets
  assert.is(plan('a'.repeat(159) + '€').parts.length, 2); // 161
  assert.is(plan('€'.repeat(80)).parts.length, 1);
  assert.is(plan('€'.repeat(81)).parts.length, 2);
  // 152 septets + "€" would be 154 > 153: the escape and its code move to part 2 together.
  const p = plan('a'.repeat(152) + '€' + 'b'.repeat(10));
  assert.equal(texts(p), ['a'.repeat(152), '€' + 'b'.repeat(10)]);
  assert.equal(p.parts.map((x) => x.udl), [7 + 152, 7 + 12]);
  const q = plan('a'.repeat(151) + '€' + 'b'.repeat(10));
  assert.equal(texts(q), ['a'.repeat(151) + '€', 'b'.repeat(10)]);
});

test('emoji (surrogate pairs) count two UCS-2 units and are never split', () => {
  assert.is(plan('a'.repeat(68) + '😀').parts.length, 1); // 70 units
  assert.is(plan('a'.repeat(69) + '😀').parts.length, 2); // 71
  const p = plan('a'.repeat(66) + '😀' + 'bbbb');
  assert.equal(texts(p), ['a'.repeat(66), '😀bbbb']);
  const q = plan('a'.repeat(65) + '😀' + 'bbbb');
  assert.equal(texts(q), ['a'.repeat(65) + '😀', 'bbbb']);
  assert.is(plan('😀'.repeat(35)).parts.length, 1);
  assert.is(plan('😀'.repeat(36)).parts.length, 2);
  assert.equal(plan('😀'.repeat(36)).parts.map((x) => x.text?.length), [66, 6]);
});

test('encoding choice: auto, forced UCS-2, forced GSM-7 with a character it lacks', () => {
  assert.is(plan('Grüße {€}').encoding, 'gsm7');
  assert.is(plan('Grüße ✓').encoding, 'ucs2');
  assert.is(plan('ok', { encoding: 'ucs2' }).encoding, 'ucs2');
  assert.equal(planMessage('ok ✓', { encoding: 'gsm7' }), { ok: false, error: 'character "✓" at index 3 has no GSM-7 code', partsNeeded: null });
  assert.throws(() => planMessage('x', { encoding: 'latin1' as 'gsm7' }), RangeError);
});

test('8-bit data: 140 octets in one part, 134 a part after that', () => {
  const count = (n: number) => {
    const p = planData(new Uint8Array(n).fill(0xab));
    return p.ok ? p.plan.parts.length : -1;
  };
  assert.equal([count(0), count(140), count(141), count(268), count(269)], [1, 1, 2, 2, 3]);
  const p = planData(Uint8Array.of(1, 2, 3));
  assert.ok(p.ok && p.plan.parts[0].dcs === 0x04 && p.plan.parts[0].udl === 3 && !p.plan.parts[0].udhi);
});

test('maxParts: a message needing more is a clear error, not a throw', () => {
  assert.equal(planMessage('a'.repeat(307), { maxParts: 2 }), { ok: false, error: 'message of 307 GSM-7 septets needs 3 parts, at most 2 allowed', partsNeeded: 3 });
  assert.equal(planMessage('ж'.repeat(71), { maxParts: 1 }), { ok: false, error: 'message of 71 UCS-2 characters needs 2 parts, at most 1 allowed', partsNeeded: 2 });
  const d = planData(new Uint8Array(141), { maxParts: 1 });
  assert.ok(!d.ok && d.partsNeeded === 2);
  assert.is(plan('a'.repeat(153 * 255)).parts.length, 255);
  assert.equal(planMessage('a'.repeat(153 * 255 + 1)), { ok: false, error: 'message of 39016 GSM-7 septets needs 256 parts, at most 255 allowed', partsNeeded: 256 });
  for (const bad of [0, 256, 1.5]) assert.throws(() => planMessage('x', { maxParts: bad }), RangeError);
  assert.throws(() => planMessage('x', { reference: 256 }), RangeError);
  assert.throws(() => planMessage('x', { reference: 70000, referenceBits: 16 }), RangeError);
  assert.throws(() => planMessage('x', { referenceBits: 12 as 8 }), RangeError);
});

test('concatenation headers: same reference, total, sequence 1..n', () => {
  const p = plan('a'.repeat(400), { reference: 0x99 });
  assert.equal(p.parts.map((x) => toHex(x.userData.subarray(0, 6))), ['050003990301', '050003990302', '050003990303']);
  assert.ok(p.parts.every((x) => x.udhi && x.dcs === 0));
  assert.not.ok(plan('short').parts[0].udhi);
});

// ---- seeded round trips: plan, encode (SUBMIT and DELIVER), decode, join ----

const GSM_BASIC = [...GSM7_DEFAULT_ALPHABET].filter((c) => c !== '\x1b');
const GSM_EXT = Object.keys(GSM7_EXTENSION_TABLE);
const OTHER = ['ж', '日', 'ü', '✓', '😀', '👍🏽', '𝄞', 'ﷺ', '\u00a0'];

function randomText(random: () => number, kind: 'gsm' | 'ext' | 'ucs2', length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) {
    const r = random();
    if (kind === 'gsm') s += GSM_BASIC[Math.floor(random() * GSM_BASIC.length)];
    else if (kind === 'ext') s += r < 0.5 ? GSM_EXT[Math.floor(random() * GSM_EXT.length)] : GSM_BASIC[Math.floor(random() * GSM_BASIC.length)];
    else s += r < 0.4 ? OTHER[Math.floor(random() * OTHER.length)] : GSM_BASIC[Math.floor(random() * GSM_BASIC.length)];
  }
  return s;
}

test('round trip: 600 seeded random GSM-7, extension-heavy and UCS-2/emoji texts through SUBMIT and DELIVER', () => {
  const random = rng(0x5e5);
  for (let i = 0; i < 600; i++) {
    const kind = (['gsm', 'ext', 'ucs2'] as const)[i % 3];
    const text = randomText(random, kind, Math.floor(random() * 700));
    const reference = Math.floor(random() * 256);
    const p = plan(text, { reference });
    assert.is(p.encoding, kind === 'ucs2' && !isGsm7(text) ? 'ucs2' : 'gsm7');
    let viaSubmit = '';
    let viaDeliver = '';
    p.parts.forEach((part, n) => {
      assert.ok(part.userData.length <= 140, `part ${n} has ${part.userData.length} octets`);
      const s = decodeSubmit(encodeSubmit(part, { destination: '+4915123456789', statusReport: true }).hex);
      if (!s.ok) throw new Error(`${s.error} for ${JSON.stringify(text)}`);
      viaSubmit += s.value.userData.text;
      if (p.parts.length > 1) assert.equal(s.value.userData.udh?.concat, { reference, referenceBits: 8, total: p.parts.length, sequence: n + 1 });
      const d = decodeDeliver(encodeDeliver(part, { originator: 'Fieldbridge', timestamp: new Date(1_700_000_000_000 + i * 60_000) }).hex);
      if (!d.ok) throw new Error(d.error);
      viaDeliver += d.value.userData.text;
      assert.is(d.value.userData.text, part.text);
    });
    assert.is(viaSubmit, text, `submit #${i}`);
    assert.is(viaDeliver, text, `deliver #${i}`);
  }
});

test('round trip: random 8-bit data through planData and DELIVER', () => {
  const random = rng(0xda7a);
  for (let i = 0; i < 200; i++) {
    const data = Uint8Array.from({ length: Math.floor(random() * 600) }, () => Math.floor(random() * 256));
    const p = planData(data, { reference: i & 0xff });
    if (!p.ok) throw new Error(p.error);
    const back = p.plan.parts.flatMap((part) => {
      const d = decodeDeliver(encodeDeliver(part, { originator: '+15550100', timestamp: new Date(0x1_0000_0000 * 400) }).hex);
      if (!d.ok) throw new Error(d.error);
      return Array.from(d.value.userData.data!);
    });
    assert.equal(Uint8Array.from(back), data);
  }
});

test.run();
