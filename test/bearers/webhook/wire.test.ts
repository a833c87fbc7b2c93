import { execFileSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OutboundFrame } from '../../../src/bearers/bearer.ts';
import { excerpt, jsonBody, retryAfterMs, sign, templateBody, verify } from '../../../src/bearers/webhook/wire.ts';
import { rng } from '../../helpers/rng.ts';

// The webhook wire (docs/protocols/webhook.md): the signature checked against openssl's own
// HMAC (the command the docs give a receiver), Retry-After read as RFC 9110 10.2.3 writes it,
// templates that keep a JSON document valid whatever the text, and a seeded fuzz of the two
// readers of outside input (Retry-After, templates) with 1,000,000 inputs.

const frame = (over: Partial<OutboundFrame> = {}): OutboundFrame => ({
  deliveryId: 'dlv_1', messageId: 'msg_1', to: 'https://example.org/in', channel: null, kind: 'text', text: 'SOS at "camp 3"\n', payload: new TextEncoder().encode('SOS at "camp 3"\n'),
  origin: { from: '!a1b2c3d4', interfaceId: 'ifc_1', createdAt: '2026-01-01T00:00:00.000Z', attempt: 2, precedence: 'flash', decision: { rule_id: 'rul_1', action: 'forward', reason: 'rule sos matched' } },
  ...over,
});

test('the signature is the HMAC-SHA256 of "<timestamp>.<body>", as openssl computes it', () => {
  const secret = 'whsec-0123456789abcdef';
  const body = Buffer.from('{"type":"delivery","text":"grüße"}', 'utf8');
  const ts = 1767225600;
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: Buffer.concat([Buffer.from(`${ts}.`), body]) }).toString();
  const hex = /([0-9a-f]{64})\s*$/.exec(out)![1];
  assert.is(sign(secret, ts, body), `sha256=${hex}`);
  assert.ok(verify(secret, ts, body, `sha256=${hex}`));
  assert.not.ok(verify(secret, ts + 1, body, `sha256=${hex}`), 'another timestamp');
  assert.not.ok(verify(`${secret}x`, ts, body, `sha256=${hex}`), 'another secret');
  assert.not.ok(verify(secret, ts, Buffer.from('{}'), `sha256=${hex}`), 'another body');
  assert.not.ok(verify(secret, ts, body, 'sha256=00'), 'a short signature');
});

test('the JSON document: message, delivery and decision; bytes as base64', () => {
  const doc = jsonBody(frame(), '2026-01-01T00:00:05.000Z');
  assert.equal(doc, {
    type: 'delivery', sent_at: '2026-01-01T00:00:05.000Z',
    delivery: { id: 'dlv_1', to: 'https://example.org/in', attempt: 2, precedence: 'flash' },
    message: { id: 'msg_1', from: '!a1b2c3d4', interface_id: 'ifc_1', created_at: '2026-01-01T00:00:00.000Z', kind: 'text', channel: null, text: 'SOS at "camp 3"\n', payload_base64: null },
    decision: { rule_id: 'rul_1', action: 'forward', reason: 'rule sos matched' },
  });
  const data = jsonBody(frame({ kind: 'data', text: null, payload: Uint8Array.of(0, 0xff, 0x7e) }), 'x') as { message: { payload_base64: string } };
  assert.is(data.message.payload_base64, 'AP9+');
});

test('templates: placeholders filled, JSON-escaped for a JSON body, unknown ones left', () => {
  const tpl = '{"content":"{{from}}: {{text}}","id":"{{ message_id }}","n":{{attempt}},"x":"{{nope}}"}';
  const out = templateBody(tpl, frame(), 'now', true);
  assert.equal(JSON.parse(out.replace('{{nope}}', '')), { content: '!a1b2c3d4: SOS at "camp 3"\n', id: 'msg_1', n: 2, x: '' });
  assert.is(templateBody('{{text}}', frame(), 'now', false), 'SOS at "camp 3"\n', 'raw for text/plain');
  assert.is(templateBody('[{{part}}]', frame({ part: { index: 2, count: 3 } }), 'now', false), '[2/3]', 'a split delivery\'s part');
  assert.is(templateBody('[{{part}}]', frame(), 'now', false), '[]', 'empty when the delivery goes whole');
});

test('Retry-After: delta seconds or an HTTP date (RFC 9110 10.2.3), never in the past, at most a day', () => {
  const now = Date.parse('1999-12-31T23:00:00Z');
  assert.is(retryAfterMs('120', now), now + 120_000);
  assert.is(retryAfterMs('Fri, 31 Dec 1999 23:59:59 GMT', now), Date.parse('1999-12-31T23:59:59Z'));
  assert.is(retryAfterMs('Fri, 31 Dec 1999 22:00:00 GMT', now), now, 'a date past is now');
  assert.is(retryAfterMs('999999999', now), now + 86_400_000, 'capped at a day');
  for (const bad of [undefined, '', ' ', 'soon', '-5', '1.5']) assert.is(retryAfterMs(bad, now), null, String(bad));
});

test('excerpt: one line, at most 200 characters', () => {
  assert.is(excerpt(Buffer.from('line one\r\nline\ttwo')), 'line one line two');
  assert.is(excerpt(Buffer.from('x'.repeat(5000))).length, 201);
});

test('fuzz: 1,000,000 Retry-After values and templates never throw; JSON templates stay valid JSON', () => {
  const random = rng(0x3b0c);
  const int = (n: number) => Math.floor(random() * n);
  const pieces = ['{{text}}', '{{from}}', '{{', '}}', '{{ to }}', '"', '\\', '\n', '\u0000', '\u2028', '😀', 'é', ' ', '0', '9', ',', 'GMT', 'Fri', '-', '{{nope}}', '{{attempt}}'];
  const junk = () => {
    let s = '';
    const n = int(12);
    for (let i = 0; i < n; i++) s += random() < 0.6 ? pieces[int(pieces.length)] : String.fromCharCode(int(0x3000));
    return s;
  };
  const now = 1_767_225_600_000;
  for (let i = 0; i < 1_000_000; i++) {
    const v = junk();
    const at = retryAfterMs(v, now);
    assert.ok(at === null || (at >= now && at <= now + 86_400_000), `Retry-After ${JSON.stringify(v)} gave ${at}`);
    if (i % 4 !== 0) continue;
    const text = junk();
    const out = templateBody('{"t":"{{text}}","f":"{{from}}"}', frame({ text, origin: { ...frame().origin!, from: v } }), 'now', true);
    const parsed = JSON.parse(out) as { t: string; f: string };
    if (parsed.t !== text || parsed.f !== v) assert.unreachable(`template lost ${JSON.stringify(text)} / ${JSON.stringify(v)}`);
  }
});

test.run();
