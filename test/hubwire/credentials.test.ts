import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hashKey } from '../../src/auth/secrets.ts';
import { TOPIC_SEGMENT } from '../../src/hubwire/topics.ts';
import {
  enrollmentTokenLookup, enrollRefusal, makeEnrollRequest, mintEnrollmentToken, openEnrollReply, parseEnrollRequest, parseEnrollTopic, sealEnrollReply,
  signPayload, verifyEnrollProof, verifyPayload,
} from '../../src/hubwire/credentials.ts';

// The codec of issue 15 item 3 (docs/hub.md, "Enrollment"). The signature fixture is not our
// encoder's output: it was computed with OpenSSL from the definition (HMAC-SHA256 under the
// secret over topic, LF, payload without the sig; base64url without padding):
//   printf 'fieldbridge/v1/acme/brg-1/message\n{"seq":7,"event_id":"evt_1","ts":"2026-11-24T00:00:00.000Z"}' \
//     | openssl dgst -sha256 -mac HMAC -macopt hexkey:6669656c646272696467652d746573742d6b65792d33322d6279746573212121 -binary \
//     | base64 | tr '+/' '-_' | tr -d '='

const SECRET = Buffer.from('fieldbridge-test-key-32-bytes!!!', 'latin1');
const TOPIC = 'fieldbridge/v1/acme/brg-1/message';
const JSON_TEXT = '{"seq":7,"event_id":"evt_1","ts":"2026-11-24T00:00:00.000Z"}';
const SIGNED = '{"seq":7,"event_id":"evt_1","ts":"2026-11-24T00:00:00.000Z","sig":"QoTB-qSUykeDvsQwETMEeaICnlpXxgWNsQ6N2JlcOAk"}';
const bytes = (s: string) => Buffer.from(s, 'utf8');

test('signPayload appends the sig OpenSSL computes from the definition; verifyPayload takes it and gives the text back', () => {
  assert.is(signPayload(SECRET, TOPIC, JSON_TEXT), SIGNED);
  assert.equal(verifyPayload(SECRET, TOPIC, bytes(SIGNED)), { ok: true, text: JSON_TEXT });
  // Multi-byte text is signed as its UTF-8 bytes.
  const text = '{"text":"Grüße, 20 °C — ok"}';
  assert.equal(verifyPayload(SECRET, TOPIC, bytes(signPayload(SECRET, TOPIC, text))), { ok: true, text });
});

test('verifyPayload: every kind of bad input is refused with its reason, never thrown', () => {
  const cases: Array<[string, Uint8Array, string]> = [
    ['unsigned', bytes(JSON_TEXT), 'unsigned'],
    ['empty', new Uint8Array(0), 'unsigned'],
    ['only a sig', bytes('{"sig":"QoTB-qSUykeDvsQwETMEeaICnlpXxgWNsQ6N2JlcOAk"}'), 'unsigned'],
    ['sig not last', bytes('{"sig":"QoTB-qSUykeDvsQwETMEeaICnlpXxgWNsQ6N2JlcOAk","seq":7}'), 'unsigned'],
    ['a space after the object', bytes(SIGNED + ' '), 'unsigned'],
    ['sig one character short', bytes(SIGNED.replace('OAk"', 'OA"')), 'unsigned'],
    ['a field changed', bytes(SIGNED.replace('"seq":7', '"seq":8')), 'bad_signature'],
    ['sig changed', bytes(SIGNED.replace('QoTB', 'QoTC')), 'bad_signature'],
    ['sig with a character outside base64url', bytes(SIGNED.replace('QoTB', 'Qo+B')), 'bad_signature'],
  ];
  for (const [what, payload, reason] of cases) assert.equal(verifyPayload(SECRET, TOPIC, payload), { ok: false, reason }, what);
  assert.equal(verifyPayload(SECRET, 'fieldbridge/v1/other/brg-1/message', bytes(SIGNED)), { ok: false, reason: 'bad_signature' }, 'another topic');
  assert.equal(verifyPayload(Buffer.alloc(32), TOPIC, bytes(SIGNED)), { ok: false, reason: 'bad_signature' }, 'another key');
  assert.throws(() => signPayload(SECRET, TOPIC, '{}'), /non-empty JSON object/);
  assert.throws(() => signPayload(SECRET, TOPIC, '[1]'), /non-empty JSON object/);
});

test('fuzz: random and mutated payloads never verify and never throw', () => {
  for (let i = 0; i < 3000; i++) {
    const n = Math.floor(Math.random() * 120);
    assert.is(verifyPayload(SECRET, TOPIC, randomBytes(n)).ok, false);
    const m = Buffer.from(SIGNED);
    const at = Math.floor(Math.random() * m.length);
    const was = m[at];
    m[at] = (was + 1 + Math.floor(Math.random() * 255)) % 256;
    assert.is(verifyPayload(SECRET, TOPIC, m).ok, false, `byte ${at} changed`);
  }
});

test('tokens: fbe_ shape, lookup found, hash as API keys keep theirs', () => {
  const t = mintEnrollmentToken();
  assert.match(t.key, /^fbe_[a-z2-9]{12}_[A-Za-z0-9_-]{43}$/);
  assert.is(enrollmentTokenLookup(t.key), t.lookup);
  assert.is(t.hash, hashKey(t.key));
  for (const bad of ['', 'fbe_', 'fbh_' + t.key.slice(4), t.key + 'x', t.key.slice(0, -1), ' ' + t.key]) assert.is(enrollmentTokenLookup(bad), null, bad);
});

test('enrollment topics: only fieldbridge/v1/_enroll/<22-character nonce>/<request|reply>', () => {
  const n = randomBytes(16).toString('base64url');
  assert.equal(parseEnrollTopic(`fieldbridge/v1/_enroll/${n}/request`), { nonce: n, kind: 'request' });
  assert.equal(parseEnrollTopic(`fieldbridge/v1/_enroll/${n}/reply`), { nonce: n, kind: 'reply' });
  for (const bad of [`fieldbridge/v1/_enroll/${n}`, `fieldbridge/v1/_enroll/${n}/other`, `fieldbridge/v1/_enroll/${n}x/request`, `fieldbridge/v1/_enroll/+/request`, `fieldbridge/v1/acme/${n}/request`, `fieldbridge/v1/_enroll/${n}/request/x`]) {
    assert.is(parseEnrollTopic(bad), null, bad);
  }
  // A tenant can never be called _enroll: topic levels start with a letter or digit.
  assert.not.ok(TOPIC_SEGMENT.test('_enroll'));
});

test('exchange: the hub verifies the proof with the token\'s hash only, and its reply opens only with the token and the request\'s key', () => {
  const t = mintEnrollmentToken();
  const request = makeEnrollRequest(t.key, Date.UTC(2026, 10, 24));
  const parsed = parseEnrollRequest(bytes(request.payload));
  assert.ok(parsed.ok);
  if (!parsed.ok) return;
  assert.is(parsed.lookup, t.lookup);
  assert.not.ok(request.payload.includes(t.key.slice(17)), 'the token\'s secret part is not in the request');
  assert.is(parsed.ts, '2026-11-24T00:00:00.000Z');
  assert.ok(verifyEnrollProof(t.hash, { nonce: request.nonce, ...parsed }));
  assert.not.ok(verifyEnrollProof(t.hash, { ...parsed, nonce: randomBytes(16).toString('base64url') }), 'a replay under another nonce');
  assert.not.ok(verifyEnrollProof(t.hash, { nonce: request.nonce, ...parsed, ts: '2027-01-01T00:00:00.000Z' }), 'a replay with a newer time');
  assert.not.ok(verifyEnrollProof(mintEnrollmentToken().hash, { nonce: request.nonce, ...parsed }), 'another token');

  const secret = randomBytes(32);
  const reply = sealEnrollReply({ tokenHashHex: t.hash, nonce: request.nonce, bridgePub: parsed.pub, tenant: 'acme', bridgeId: 'brg_01', secret, now: 0 });
  assert.not.ok(reply.includes(secret.toString('base64url')));
  const opened = openEnrollReply(bytes(reply), t.key, request, (s) => TOPIC_SEGMENT.test(s));
  assert.ok(opened.ok && opened.secret.equals(secret) && opened.tenant === 'acme' && opened.bridgeId === 'brg_01');
  const segment = (s: string) => TOPIC_SEGMENT.test(s);
  // Another token, another request's key, names changed on the way, the box altered.
  assert.not.ok(openEnrollReply(bytes(reply), mintEnrollmentToken().key, request, segment).ok);
  assert.not.ok(openEnrollReply(bytes(reply), t.key, makeEnrollRequest(t.key, 0), segment).ok);
  assert.not.ok(openEnrollReply(bytes(reply.replace('"tenant":"acme"', '"tenant":"evil"')), t.key, request, segment).ok);
  assert.not.ok(openEnrollReply(bytes(reply.replace('"bridge_id":"brg_01"', '"bridge_id":"brg_02"')), t.key, request, segment).ok);
  const box = JSON.parse(reply).box as string;
  const flipped = (box[0] === 'A' ? 'B' : 'A') + box.slice(1);
  assert.not.ok(openEnrollReply(bytes(reply.replace(box, flipped)), t.key, request, segment).ok);
  // A refusal is read as one; a tenant that is no topic level is refused.
  const refusal = openEnrollReply(bytes(enrollRefusal('revoked', 0)), t.key, request, segment);
  assert.equal(refusal.ok ? null : refusal.refused, 'revoked');
  assert.not.ok(openEnrollReply(bytes(reply.replace('"tenant":"acme"', '"tenant":"a/b"')), t.key, request, segment).ok);
});

test('fuzz: enrollment requests and replies of random bytes and random JSON never throw', () => {
  const t = mintEnrollmentToken();
  const request = makeEnrollRequest(t.key, 0);
  const segment = (s: string) => TOPIC_SEGMENT.test(s);
  const secret = randomBytes(32);
  const valid = sealEnrollReply({ tokenHashHex: t.hash, nonce: request.nonce, bridgePub: JSON.parse(request.payload).pub, tenant: 'acme', bridgeId: 'brg_01', secret, now: 0 });
  for (let i = 0; i < 2000; i++) {
    const junk = randomBytes(Math.floor(Math.random() * 200));
    assert.is(parseEnrollRequest(junk).ok, false);
    assert.is(openEnrollReply(junk, t.key, request, segment).ok, false);
    // A valid reply with one character changed never opens to anything else (a change in a
    // field nobody reads, like ts, may still open to the same secret and names).
    const chars = [...valid];
    const at = Math.floor(Math.random() * chars.length);
    chars[at] = String.fromCharCode(32 + Math.floor(Math.random() * 95));
    const mutated = chars.join('');
    if (mutated !== valid) {
      let result;
      try {
        result = openEnrollReply(bytes(mutated), t.key, request, segment);
      } catch (e) {
        assert.unreachable(`threw on ${mutated}: ${(e as Error).message}`);
      }
      if (result!.ok) assert.ok(result!.secret.equals(secret) && result!.tenant === 'acme' && result!.bridgeId === 'brg_01', mutated);
    }
  }
  for (const v of [null, 1, 'x', [], { v: 1 }, { v: 1, lookup: 'abcdefghijkm', pub: 'x', proof: 'y' }, { v: 2, lookup: 'abcdefghijkm', pub: 'A'.repeat(43), proof: 'A'.repeat(43) }]) {
    assert.is(parseEnrollRequest(bytes(JSON.stringify(v))).ok, false, JSON.stringify(v));
  }
});

test.run();
