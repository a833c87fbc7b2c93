import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyTransforms,
  decodeBase64Strict,
  TransformPipeline,
  TransformStep,
  truncateUtf8,
  type TransformInput,
  type TransformResult,
} from '../../../src/bridge/engine/transforms.ts';

const msg = (over: Partial<TransformInput> = {}): TransformInput => ({
  text: 'hello',
  payload: null,
  from: '!a1b2c3d4',
  to: '+4917012345678',
  interface: 'mesh-0',
  channel: 2,
  ...over,
});

const steps = (...raw: unknown[]) => raw.map((r) => TransformStep.parse(r));
const run = (raw: unknown[], input: TransformInput) => applyTransforms(steps(...raw), input);
const texts = (r: TransformResult) => {
  if (r.kind !== 'ok') throw new Error(`expected ok, got dropped: ${r.reason}`);
  return r.outputs.map((o) => o.text);
};
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const issues = (raw: unknown) => {
  const r = TransformStep.safeParse(raw);
  if (r.success) throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  return r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
};

// ---- validation ----

test('every step type validates with its fields', () => {
  for (const raw of [
    { type: 'truncate', max_bytes: 160 },
    { type: 'prefix', text: '[{interface}] {from}->{to} ch{channel}: ' },
    { type: 'split', max_bytes: 16 },
    { type: 'strip_non_gsm7' },
    { type: 'to_base64' },
    { type: 'from_base64' },
    { type: 'drop_if', regex: '^[Tt]est\\b' },
  ]) {
    assert.equal(TransformStep.parse(raw), raw);
  }
});

test('an unknown step type is refused with the list of known types', () => {
  const [issue] = issues({ type: 'rot13' });
  assert.is(issue.path, 'type');
  assert.match(issue.message, /truncate, prefix, split, strip_non_gsm7, to_base64, from_base64, drop_if/);
  assert.is(issues({})[0].path, 'type');
  assert.ok(!TransformStep.safeParse(null).success);
  assert.ok(!TransformStep.safeParse('truncate').success);
});

test('unknown fields on a step are refused (a typo is never silently ignored)', () => {
  const found = issues({ type: 'truncate', max_byte: 10 });
  assert.ok(found.some((i) => i.message.includes('max_byte')));
  assert.ok(found.some((i) => i.path === 'max_bytes'));
});

test('max_bytes must be a whole number in range, named in the message', () => {
  for (const bad of [0, -1, 1.5, 65536, '10', null]) {
    const [issue] = issues({ type: 'truncate', max_bytes: bad });
    assert.is(issue.path, 'max_bytes');
    assert.match(issue.message, /max_bytes/);
  }
  const [split] = issues({ type: 'split', max_bytes: 15 });
  assert.is(split.path, 'max_bytes');
  assert.match(split.message, /split\.max_bytes must be at least 16/);
});

test('prefix: unknown placeholders are refused by name; lone braces are literal text', () => {
  const [issue] = issues({ type: 'prefix', text: '{from} {sender} {}' });
  assert.is(issue.path, 'text');
  assert.match(issue.message, /\{sender\}, \{\}/);
  assert.match(issue.message, /known: \{from\}, \{to\}, \{interface\}, \{channel\}/);
  assert.is(issues({ type: 'prefix', text: '' })[0].path, 'text');
  assert.is(issues({ type: 'prefix', text: 'x'.repeat(201) })[0].path, 'text');
  assert.ok(TransformStep.safeParse({ type: 'prefix', text: 'a { b' }).success);
  assert.ok(TransformStep.safeParse({ type: 'prefix', text: 'x } y {from}' }).success);
  assert.ok(!TransformStep.safeParse({ type: 'prefix', text: 'a { b } c' }).success); // a pair is a placeholder
});

test('drop_if: a bad, over-long or non-linear regex is refused naming the field; ReDoS shapes run in linear time', () => {
  const bad = issues({ type: 'drop_if', regex: '(unclosed' });
  assert.is(bad[0].path, 'regex');
  assert.match(bad[0].message, /drop_if\.regex is not a valid regular expression/);
  const long = issues({ type: 'drop_if', regex: 'a'.repeat(201) });
  assert.is(long[0].path, 'regex');
  assert.match(long[0].message, /at most 200 characters/);
  // Backreferences, lookahead and (?i:...) cannot run in linear time: refused, saying why.
  for (const nonLinear of ['(\\w)\\1', '(?<word>\\w+) \\k<word>', 'a(?=b)', '^(?i:test)']) {
    const [issue] = issues({ type: 'drop_if', regex: nonLinear });
    assert.is(issue.path, 'regex', nonLinear);
    assert.match(issue.message, /linear time/);
  }
  // Classic catastrophic-backtracking shapes are accepted: the linear engine runs them on a
  // hostile 30,000-character text without blowing up (the whole loop would take minutes on
  // a backtracking engine).
  const hostile = 'a'.repeat(30_000) + '!';
  for (const redos of ['(a+)+$', '(a|a)+$', '(\\w+\\s?)*x', '(?:x*y){2,}', '^(a|aa)+(b+)*$']) {
    const step = TransformStep.parse({ type: 'drop_if', regex: redos });
    const r = applyTransforms([step], { text: hostile, payload: null, from: 'x', to: 'y', interface: 'i', channel: null });
    assert.is(r.kind, 'ok', redos);
  }
  for (const ok of ['^(SOS|MAYDAY)+', 'a+b*c{2,}', '[(a+)]+', '\\(a+\\)+', '^[Tt][Ee][Ss][Tt]\\b']) {
    assert.ok(TransformStep.safeParse({ type: 'drop_if', regex: ok }).success, ok);
  }
  assert.is(issues({ type: 'drop_if', regex: '' })[0].path, 'regex');
});

test('a pipeline defaults both directions to no steps and refuses unknown keys and too many steps', () => {
  assert.equal(TransformPipeline.parse({}), { inbound: [], outbound: [] });
  const typo = TransformPipeline.safeParse({ inbond: [] });
  assert.ok(!typo.success);
  const many = TransformPipeline.safeParse({ outbound: Array.from({ length: 33 }, () => ({ type: 'to_base64' })) });
  assert.ok(!many.success);
  if (!many.success) assert.match(many.error.issues[0].message, /outbound may hold at most 32 steps/);
  const nested = TransformPipeline.safeParse({ outbound: [{ type: 'truncate', max_bytes: 10 }, { type: 'split', max_bytes: 3 }] });
  assert.ok(!nested.success);
  if (!nested.success) assert.equal(nested.error.issues[0].path, ['outbound', 1, 'max_bytes']);
});

// ---- truncate ----

test('truncate cuts text to max_bytes without cutting a multi-byte character', () => {
  assert.equal(texts(run([{ type: 'truncate', max_bytes: 3 }], msg({ text: 'hello' }))), ['hel']);
  // "é" is 2 bytes: 3 bytes hold "a" + "é", 2 bytes only "a".
  assert.equal(texts(run([{ type: 'truncate', max_bytes: 3 }], msg({ text: 'aéb' }))), ['aé']);
  assert.equal(texts(run([{ type: 'truncate', max_bytes: 2 }], msg({ text: 'aéb' }))), ['a']);
  // An emoji is 4 bytes (a surrogate pair in JS): never half of it.
  assert.equal(texts(run([{ type: 'truncate', max_bytes: 4 }], msg({ text: 'x😀' }))), ['x']);
  assert.equal(texts(run([{ type: 'truncate', max_bytes: 5 }], msg({ text: 'x😀' }))), ['x😀']);
});

test('truncate at every length of a mixed string gives the longest whole-character prefix', () => {
  const text = 'a€é😀b ü𝄞z'; // 1, 3, 2, 4, 1, 1, 2, 4, 1 bytes
  const total = bytes(text);
  for (let max = 0; max <= total + 1; max++) {
    const out = truncateUtf8(text, max);
    assert.ok(text.startsWith(out), `prefix at ${max}`);
    assert.ok(bytes(out) <= max, `fits at ${max}`);
    assert.not.match(Buffer.from(out, 'utf8').toString('utf8'), /\uFFFD/);
    const next = [...text.slice(out.length)][0];
    if (next !== undefined) assert.ok(bytes(out + next) > max, `longest at ${max}`);
  }
});

test('truncate cuts a payload by bytes and leaves short content untouched', () => {
  const r = run([{ type: 'truncate', max_bytes: 2 }], msg({ text: null, payload: new Uint8Array([1, 2, 3]) }));
  assert.ok(r.kind === 'ok');
  if (r.kind === 'ok') assert.equal([...r.outputs[0].payload!], [1, 2]);
  const input = msg({ text: 'hi', payload: new Uint8Array([104, 105]) });
  const same = run([{ type: 'truncate', max_bytes: 10 }], input);
  assert.ok(same.kind === 'ok' && same.outputs[0] === input);
});

test('a step that rewrites text drops the now stale payload', () => {
  const r = run([{ type: 'truncate', max_bytes: 1 }], msg({ text: 'hi', payload: new Uint8Array([104, 105]) }));
  assert.ok(r.kind === 'ok');
  if (r.kind === 'ok') assert.equal(r.outputs[0], { ...msg({ text: 'h' }), payload: null });
});

// ---- prefix ----

test('prefix renders every placeholder; a null channel renders as nothing', () => {
  const step = { type: 'prefix', text: '[{interface}] {from}>{to} #{channel}: ' };
  assert.equal(texts(run([step], msg())), ['[mesh-0] !a1b2c3d4>+4917012345678 #2: hello']);
  assert.equal(texts(run([step], msg({ channel: null }))), ['[mesh-0] !a1b2c3d4>+4917012345678 #: hello']);
  // The address itself containing "{to}" is not expanded again.
  assert.equal(texts(run([{ type: 'prefix', text: '{from}/{to} ' }], msg({ from: '{to}', to: 'x' }))), ['{to}/x hello']);
});

test('text steps leave a message without text untouched', () => {
  const binary = msg({ text: null, payload: new Uint8Array([0, 255]) });
  const r = run([{ type: 'prefix', text: 'x' }, { type: 'strip_non_gsm7' }, { type: 'drop_if', regex: '.*' }], binary);
  assert.ok(r.kind === 'ok' && r.outputs.length === 1 && r.outputs[0] === binary);
});

// ---- split ----

test('split leaves a message that fits alone, unnumbered', () => {
  const text = 'x'.repeat(20);
  assert.equal(texts(run([{ type: 'split', max_bytes: 20 }], msg({ text }))), [text]);
});

test('split numbers parts inside max_bytes and loses nothing', () => {
  const text = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const out = texts(run([{ type: 'split', max_bytes: 16 }], msg({ text })));
  // "(i/n) " takes 6 bytes: 10 characters per part.
  assert.equal(out, ['(1/4) abcdefghij', '(2/4) klmnopqrst', '(3/4) uvwxyz0123', '(4/4) 456789']);
  for (const part of out) assert.ok(bytes(part!) <= 16);
});

test('split prefers a space in the second half of a part and does not send the space', () => {
  const out = texts(run([{ type: 'split', max_bytes: 20 }], msg({ text: 'meet at the north gate at dawn' })));
  assert.equal(out, ['(1/3) meet at the', '(2/3) north gate at', '(3/3) dawn']);
});

test('split widens the numbering when the parts reach 10 and 100', () => {
  for (const [length, maxBytes] of [[90, 16], [100, 16], [1000, 20], [5000, 30]] as const) {
    const text = 'y'.repeat(length);
    const out = texts(run([{ type: 'split', max_bytes: maxBytes }], msg({ text })));
    const n = out.length;
    out.forEach((part, i) => {
      assert.ok(bytes(part!) <= maxBytes, `${length}/${maxBytes}: part ${i + 1} is ${bytes(part!)} bytes`);
      assert.ok(part!.startsWith(`(${i + 1}/${n}) `));
    });
    assert.is(out.map((p) => p!.replace(/^\(\d+\/\d+\) /, '')).join(''), text);
  }
});

test('split never cuts a multi-byte character', () => {
  const text = '😀é€'.repeat(40);
  const out = texts(run([{ type: 'split', max_bytes: 17 }], msg({ text })));
  for (const part of out) {
    assert.ok(bytes(part!) <= 17);
    assert.not.match(part!, /[\uD800-\uDFFF](?![\uDC00-\uDFFF])/u);
  }
  assert.is(out.map((p) => p!.replace(/^\(\d+\/\d+\) /, '')).join(''), text);
});

test('split drops a message that would need more than 255 parts, naming the step', () => {
  const r = run([{ type: 'truncate', max_bytes: 10_000 }, { type: 'split', max_bytes: 16 }], msg({ text: 'z'.repeat(10_000) }));
  assert.equal(r.kind, 'dropped');
  if (r.kind === 'dropped') {
    assert.is(r.step, 1);
    assert.match(r.reason, /split: 10000 bytes need more than 255 parts of 16 bytes/);
  }
  // 255 parts exactly is allowed: 255 * (16 - 10) = 1530 bytes at 3-digit numbering.
  const ok = run([{ type: 'split', max_bytes: 16 }], msg({ text: 'z'.repeat(1500) }));
  assert.ok(ok.kind === 'ok' && ok.outputs.length <= 255);
});

test('split cuts a payload into numbered byte parts', () => {
  const payload = new Uint8Array(30).map((_, i) => i);
  const r = run([{ type: 'split', max_bytes: 16 }], msg({ text: null, payload }));
  assert.ok(r.kind === 'ok');
  if (r.kind !== 'ok') return;
  assert.is(r.outputs.length, 3);
  assert.is(Buffer.from(r.outputs[0].payload!.subarray(0, 6)).toString('latin1'), '(1/3) ');
  const body = r.outputs.flatMap((o) => [...o.payload!.subarray(6)]);
  assert.equal(body, [...payload]);
  for (const o of r.outputs) assert.ok(o.payload!.length <= 16 && o.text === null);
});

test('split parts keep the addresses, interface and channel', () => {
  const r = run([{ type: 'split', max_bytes: 16 }], msg({ text: 'q'.repeat(30) }));
  assert.ok(r.kind === 'ok');
  if (r.kind === 'ok') for (const o of r.outputs) assert.equal({ ...o, text: null }, { ...msg(), text: null });
});

// ---- GSM-7 ----
// The alphabet itself (isGsm7, toGsm7) is tested in test/bearers/shared/codec/gsm7.test.ts.

test('strip_non_gsm7 keeps the whole GSM basic set and extension table', () => {
  const gsm = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà\f^{}\\[~]|€';
  assert.equal(texts(run([{ type: 'strip_non_gsm7' }], msg({ text: gsm }))), [gsm]);
});

// ---- base64 ----

test('to_base64 then from_base64 gives the original bytes back', () => {
  const r = run([{ type: 'to_base64' }], msg({ text: 'héllo' }));
  assert.equal(texts(r), [Buffer.from('héllo').toString('base64')]);
  const back = run([{ type: 'to_base64' }, { type: 'from_base64' }], msg({ text: 'héllo' }));
  assert.ok(back.kind === 'ok');
  if (back.kind === 'ok') {
    assert.is(back.outputs[0].text, null);
    assert.is(Buffer.from(back.outputs[0].payload!).toString('utf8'), 'héllo');
  }
  const binary = run([{ type: 'to_base64' }], msg({ text: null, payload: new Uint8Array([0, 1, 254, 255]) }));
  assert.equal(texts(binary), ['AAH+/w==']);
});

test('from_base64 accepts missing padding and line wrapping, and reads a payload as text', () => {
  assert.equal([...(decodeBase64Strict('AAH+/w') as Uint8Array)], [0, 1, 254, 255]);
  assert.equal([...(decodeBase64Strict('AAH+\r\n/w==') as Uint8Array)], [0, 1, 254, 255]);
  assert.equal([...(decodeBase64Strict('') as Uint8Array)], []);
  const r = run([{ type: 'from_base64' }], msg({ text: null, payload: new Uint8Array(Buffer.from('aGk=')) }));
  assert.ok(r.kind === 'ok' && Buffer.from(r.outputs[0].payload!).toString() === 'hi');
});

test('from_base64 drops a message that is not base64 and says why, never throws', () => {
  for (const [bad, why] of [
    ['hello!', /unexpected "!" at position 5/],
    ['a=bc', /unexpected "="/],
    ['abcde', /dangling/],
    ['QQ=', /padding/],
    ['QUJD=', /padding/],
    ['-_-_', /unexpected "-"/],
  ] as const) {
    const r = run([{ type: 'from_base64' }], msg({ text: bad }));
    assert.is(r.kind, 'dropped', bad);
    if (r.kind === 'dropped') {
      assert.is(r.step, 0);
      assert.match(r.reason, /^from_base64: text is not valid base64/);
      assert.match(r.reason, why);
    }
  }
});

// ---- drop_if ----

test('drop_if drops matching text with the pattern in the reason and the step index', () => {
  const pipeline = [{ type: 'prefix', text: '{from}: ' }, { type: 'drop_if', regex: '[Tt][Ee][Ss][Tt]' }];
  const r = run(pipeline, msg({ text: 'This is a TEST' }));
  assert.equal(r, { kind: 'dropped', reason: 'drop_if: text matches /[Tt][Ee][Ss][Tt]/', step: 1 });
  assert.equal(texts(run(pipeline, msg({ text: 'real alert' }))), ['!a1b2c3d4: real alert']);
  // Case-sensitive unless asked: "Test" does not match "test".
  assert.equal(run([{ type: 'drop_if', regex: 'test' }], msg({ text: 'Test' })).kind, 'ok');
});

test('a drop of any split part drops the whole message', () => {
  const r = run([{ type: 'split', max_bytes: 16 }, { type: 'drop_if', regex: '^\\(2/' }], msg({ text: 'w'.repeat(25) }));
  assert.equal(r, { kind: 'dropped', reason: 'drop_if: text matches /^\\(2//', step: 1 });
});

test('steps run in order: strip, prefix, truncate, split', () => {
  const r = run(
    [{ type: 'strip_non_gsm7' }, { type: 'prefix', text: '{from}: ' }, { type: 'truncate', max_bytes: 40 }, { type: 'split', max_bytes: 24 }],
    msg({ text: 'Need “water” at camp 3 😀 urgently please' }),
  );
  // 40 bytes after the truncate: "!a1b2c3d4: Need "water" at camp 3 ? urge".
  assert.equal(texts(r), ['(1/3) !a1b2c3d4: Need', '(2/3) "water" at camp 3', '(3/3) ? urge']);
});

test('no steps: the message passes as it is', () => {
  const input = msg();
  const r = applyTransforms([], input);
  assert.ok(r.kind === 'ok' && r.outputs.length === 1 && r.outputs[0] === input);
});

test.run();
