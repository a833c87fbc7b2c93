import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { verify } from '../../../src/bearers/webhook/wire.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { waitUntil } from '../../helpers/api.ts';
import { makeTestCa, type Receiver, startReceiver, type TestCa } from './receiver.ts';

// The webhook bearer in a running bridge, against real HTTP and HTTPS servers: what a receiver
// sees (one delivery id on every attempt, a valid signature on each, the message, its delivery
// and the decision in the body) and what the delivery ends as for each kind of answer. The
// secret never shows: not in an answer, an export or a log line.

const SECRET = 'whsec-test-0123456789-abcdefgh';
const RETRY = { base_s: 0.1, cap_s: 0.2, max_attempts: 5 };

let t: TestBridge;
let plain: Receiver;
let secure: Receiver;
let ca: TestCa;
let dir: string;
const rules = new Map<string, string>();

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fb-webhook-'));
  ca = makeTestCa(dir);
  plain = await startReceiver();
  secure = await startReceiver(ca);
  t = await startTestBridge();
  const made = await t.call('POST', '/api/interfaces', { body: { name: 'web', kind: 'webhook', device: 'auto', settings: { secret: SECRET }, retry: RETRY } });
  assert.is(made.status, 201, made.text);
  const slow = await t.call('POST', '/api/interfaces', { body: { name: 'web-slow', kind: 'webhook', device: 'auto', settings: { secret: SECRET, timeout_s: 1 }, retry: RETRY } });
  assert.is(slow.status, 201, slow.text);
  const trusted = await t.call('POST', '/api/interfaces', { body: { name: 'web-ca', kind: 'webhook', device: 'auto', settings: { secret: SECRET, ca_file: ca.caFile }, retry: RETRY } });
  assert.is(trusted.status, 201, trusted.text);
  await waitUntil('web online', async () => (await t.call('GET', '/api/interfaces/health')).body.items.every((i: { connected: boolean }) => i.connected));
});

test.after(async () => {
  await t?.stop();
  await plain?.close();
  await secure?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A message sent through the API to `to`, which a rule forwards to that URL on `iface`. */
async function send(to: string, text: string, iface = to.startsWith('https:') ? 'web-ca' : 'web'): Promise<{ messageId: string; deliveryId: string }> {
  const rule = await t.call('POST', '/api/access-rules', { body: { name: `to-${rules.size}`, match: { direction: 'outbound', to: [to] }, schedule: null, action: 'forward', destinations: [{ interface: iface, to: '{to}' }] } });
  assert.is(rule.status, 201, rule.text);
  rules.set(to, rule.body.id);
  const r = await t.call('POST', '/api/messages/send', { body: { to, text } });
  assert.is(r.status, 202, r.text);
  assert.is(r.body.deliveries.length, 1, r.text);
  return { messageId: r.body.message.id, deliveryId: r.body.deliveries[0].id };
}

function finished(id: string): Promise<any> {
  return waitUntil(`delivery ${id} finished`, async () => {
    const r = await t.call('GET', `/api/deliveries/${id}`);
    return r.body.finished_at !== null && r.body;
  }, 15_000);
}

const signed = (req: { headers: Record<string, unknown>; body: Buffer }) =>
  verify(SECRET, Number(req.headers['x-fieldbridge-timestamp']), req.body, String(req.headers['x-fieldbridge-signature']));

test('500, 500, then 200: delivered after three attempts, one delivery id on all three, each signed', async () => {
  plain.script('/flaky', [{ status: 500, body: 'database down' }, { status: 503 }, { status: 200, body: 'ok' }]);
  const { messageId, deliveryId } = await send(`${plain.url}/flaky`, 'water at camp 3');
  const d = await finished(deliveryId);
  assert.is(d.state, 'delivered', JSON.stringify(d));
  assert.is(d.attempts, 3);
  const got = plain.requests.filter((r) => r.path === '/flaky');
  assert.is(got.length, 3, 'three requests reached the receiver');
  assert.equal(got.map((r) => r.headers['x-fieldbridge-delivery']), [deliveryId, deliveryId, deliveryId], 'one delivery id on all three');
  assert.equal(got.map((r) => r.headers['x-fieldbridge-attempt']), ['1', '2', '3']);
  for (const r of got) {
    assert.ok(signed(r), 'the signature is valid');
    assert.is(r.headers['content-type'], 'application/json');
    assert.match(String(r.headers['user-agent']), /^fieldbridge\//);
  }
  // A signature made with another secret, or over another body, does not pass.
  assert.not.ok(verify('another-secret-0123456789', Number(got[0].headers['x-fieldbridge-timestamp']), got[0].body, String(got[0].headers['x-fieldbridge-signature'])));
  const body = JSON.parse(got[2].body.toString('utf8'));
  assert.is(body.type, 'delivery');
  assert.equal(body.delivery, { id: deliveryId, to: `${plain.url}/flaky`, attempt: 3, precedence: 'routine' });
  assert.is(body.message.id, messageId);
  assert.is(body.message.text, 'water at camp 3');
  assert.is(body.message.from, 'local');
  assert.is(body.message.kind, 'text');
  assert.is(body.decision.rule_id, rules.get(`${plain.url}/flaky`), 'the decision names the rule');
  assert.is(body.decision.action, 'forward');
  const stats = await t.call('GET', '/api/interfaces/web/stats');
  assert.is(stats.status, 200, stats.text);
  assert.ok(stats.body.stats.sent >= 1 && stats.body.stats.retried >= 2, stats.text);
});

test('429 with Retry-After: the next attempt waits as long as it says, then delivers', async () => {
  plain.script('/busy', [{ status: 429, headers: { 'Retry-After': '1' }, body: 'slow down' }, { status: 204 }]);
  const { deliveryId } = await send(`${plain.url}/busy`, 'position report');
  const d = await finished(deliveryId);
  assert.is(d.state, 'delivered', JSON.stringify(d));
  assert.is(d.attempts, 2);
  const got = plain.requests.filter((r) => r.path === '/busy');
  assert.is(got.length, 2);
  // The backoff alone would wait at most 0.2 s; Retry-After said 1 s.
  assert.ok(got[1].atMs - got[0].atMs >= 900, `waited ${Math.round(got[1].atMs - got[0].atMs)} ms`);
});

test('400: dead at once, with the status and the start of the answer', async () => {
  plain.script('/strict', [{ status: 400, body: `{"error":"field 'sender' is missing"}${' padding'.repeat(100)}` }]);
  const { deliveryId } = await send(`${plain.url}/strict`, 'bad shape');
  const d = await finished(deliveryId);
  assert.is(d.state, 'dead', JSON.stringify(d));
  assert.is(d.attempts, 1, 'no retry');
  assert.match(d.last_error, /ERR_WEBHOOK_REFUSED: the receiver answered 400 Bad Request: \{"error":"field 'sender' is missing"\}/);
  assert.ok(d.last_error.length < 400, 'the excerpt is short');
  assert.is(plain.requests.filter((r) => r.path === '/strict').length, 1);
});

test('no answer within timeout_s: retried with the same delivery id, delivered when the receiver answers', async () => {
  plain.script('/slow', [{ status: 200, delayMs: 3000 }, { status: 200 }]);
  const { deliveryId } = await send(`${plain.url}/slow`, 'are you there', 'web-slow');
  const d = await finished(deliveryId);
  assert.is(d.state, 'delivered', JSON.stringify(d));
  assert.is(d.attempts, 2);
  const got = plain.requests.filter((r) => r.path === '/slow');
  assert.equal(got.map((r) => r.headers['x-fieldbridge-delivery']), [deliveryId, deliveryId]);
  const stats = await t.call('GET', '/api/interfaces/web-slow/stats');
  assert.is(stats.body.stats.retried, 1, stats.text);
});

test('https: delivered with the CA file; without it the certificate is refused and retried', async () => {
  const { deliveryId } = await send(`${secure.url}/tls`, 'over tls');
  const d = await finished(deliveryId);
  assert.is(d.state, 'delivered', JSON.stringify(d));
  const got = secure.requests.filter((r) => r.path === '/tls');
  assert.is(got.length, 1);
  assert.ok(signed(got[0]), 'signed over TLS too');

  // The same receiver through `web`, which does not trust the test CA.
  const { deliveryId: refusedId } = await send(`${secure.url}/untrusted`, 'untrusted', 'web');
  const failed = await waitUntil('a certificate error', async () => {
    const x = await t.call('GET', `/api/deliveries/${refusedId}`);
    return x.body.last_error !== null && x.body;
  });
  assert.match(failed.last_error, /ERR_WEBHOOK_TLS/);
  assert.is(secure.requests.filter((q) => q.path === '/untrusted').length, 0, 'nothing was posted to an untrusted server');
});

test('a split delivery: each part says which it is (header and body), so one delivery id and the part are the key; a retry sends every part again', async () => {
  const made = await t.call('POST', '/api/interfaces', { body: { name: 'web-split', kind: 'webhook', device: 'auto', settings: { secret: SECRET }, retry: RETRY, transforms: { inbound: [], outbound: [{ type: 'split', max_bytes: 40 }] } } });
  assert.is(made.status, 201, made.text);
  await waitUntil('web-split online', async () => (await t.call('GET', '/api/interfaces/health')).body.items.every((i: { connected: boolean }) => i.connected));
  // The second part is refused once: the delivery retries and both parts go again.
  plain.script('/parts', [{ status: 200 }, { status: 503 }, { status: 200 }, { status: 200 }]);
  const text = 'water at camp 3, two tents down, wind from the north, all well';
  const { deliveryId } = await send(`${plain.url}/parts`, text, 'web-split');
  const d = await finished(deliveryId);
  assert.is(d.state, 'delivered', JSON.stringify(d));
  const got = plain.requests.filter((r) => r.path === '/parts');
  assert.equal(got.map((r) => [r.headers['x-fieldbridge-delivery'], r.headers['x-fieldbridge-part'], r.headers['x-fieldbridge-attempt']]), [
    [deliveryId, '1/2', '1'], [deliveryId, '2/2', '1'], [deliveryId, '1/2', '2'], [deliveryId, '2/2', '2'],
  ]);
  const bodies = got.map((r) => JSON.parse(r.body.toString('utf8')));
  assert.equal(bodies.map((b) => b.delivery.part), [{ index: 1, count: 2 }, { index: 2, count: 2 }, { index: 1, count: 2 }, { index: 2, count: 2 }]);
  // The split transform's own part marks, in the text the radios carry.
  assert.equal(bodies.slice(0, 2).map((b) => b.message.text), ['(1/2) water at camp 3, two tents down,', '(2/2) wind from the north, all well']);
  for (const r of got) assert.ok(signed(r));
});

test('the secret never appears: not in an answer, an export, or a log line', async () => {
  const one = await t.call('GET', '/api/interfaces/web');
  assert.is(one.body.settings.secret, '<redacted>');
  const answers = await Promise.all(['/api/interfaces', '/api/interfaces/web', '/api/interfaces/web/stats', '/api/interfaces/health', '/api/config/export', '/api/deliveries', '/api/messages'].map((p) => t.call('GET', p)));
  for (const a of answers) {
    assert.is(a.status, 200, a.text);
    assert.not.ok(a.text.includes(SECRET), `no secret in ${a.text.slice(0, 200)}`);
  }
  assert.ok(answers[4].text.includes('<redacted>'), 'the export shows the marker');
  // Writing the marker back keeps the secret: the next request is still signed with it.
  const put = await t.call('PATCH', '/api/interfaces/web', { body: { settings: { timeout_s: 5 } } });
  assert.is(put.status, 200, put.text);
  await waitUntil('web online again', async () => (await t.call('GET', '/api/interfaces/health')).body.items.find((i: { name: string }) => i.name === 'web').connected);
  const { deliveryId } = await send(`${plain.url}/after-patch`, 'still signed');
  assert.is((await finished(deliveryId)).state, 'delivered');
  assert.ok(signed(plain.requests.find((r) => r.path === '/after-patch')!), 'signed with the kept secret');
  assert.not.ok(t.logs.some((l) => l.includes(SECRET)), 'no log line holds the secret');
});

test.run();
