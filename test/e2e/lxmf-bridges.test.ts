import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeChannel } from '../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp, type SimTransport } from '../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../src/bearers/rnode/simulator/simulator.ts';
import { backupDatabase } from '../../src/bridge/config/backup.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

// Two bridges whose RNode interfaces run in reticulum mode, over real TCP byte streams to two
// simulated RNodes on one simulated LoRa channel: each announces its LXMF address, hears the
// other's, and a message crosses signed, encrypted and proven (docs/reticulum.md). Both ends
// are our code; test/e2e/lxmf-peer.test.ts checks the same against the real Reticulum and LXMF.

const channel = new RNodeChannel({ linkQuality: () => ({ rssi_dbm: -90, snr_db: 7 }) });
const simA = new RNodeSimulator({ name: 'radio-a', channel });
const simB = new RNodeSimulator({ name: 'radio-b', channel });
let tcpA: SimTransport;
let tcpB: SimTransport;
let a: TestBridge;
let b: TestBridge;
let addressA = '';
let addressB = '';

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const reticulumOf = async (t: TestBridge) => (await t.call('GET', '/api/interfaces/lora')).body.reported.reticulum;

test.before(async () => {
  tcpA = await serveRNodeTcp(simA, { port: 0 });
  tcpB = await serveRNodeTcp(simB, { port: 0 });
  a = await startTestBridge();
  b = await startTestBridge();
  for (const [t, transport, name] of [[a, tcpA, 'Bridge A'], [b, tcpB, 'Bridge B']] as const) {
    const r = await t.call('POST', '/api/interfaces', { body: { name: 'lora', kind: 'rnode', device: transport.device, settings: { preset: 'eu-868', mode: 'reticulum', display_name: name } } });
    assert.is(r.status, 201, r.text);
  }
  addressA = (await until('A online with an address', async () => (await reticulumOf(a))?.last_announce_at && (await reticulumOf(a)))).lxmf_address;
  addressB = (await until('B online with an address', async () => (await reticulumOf(b))?.last_announce_at && (await reticulumOf(b)))).lxmf_address;
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpA?.close();
  await tcpB?.close();
  simA.close();
  simB.close();
});

test('each bridge announces its LXMF address and lists the other as an LXMF node with its display name', async () => {
  assert.match(addressA, /^[0-9a-f]{32}$/);
  assert.is.not(addressA, addressB);
  const peer = await until('A to hear B announce', async () => (await a.call('GET', `/api/nodes/${addressB}`)).body?.long_name === 'Bridge B' && (await a.call('GET', `/api/nodes/${addressB}`)).body);
  assert.is(peer.network, 'lxmf');
  assert.is(peer.num, null);
  await until('B to hear A announce', async () => (await b.call('GET', `/api/nodes/${addressA}`)).status === 200);
});

test('a message from A reaches B signed and verified; A\'s delivery is delivered only by B\'s proof; B answers "{from}" and A gets it', async () => {
  const echo = await b.call('POST', '/api/access-rules', {
    body: { name: 'echo', match: { direction: 'inbound', interfaces: ['lora'], text: { regex: '^ping' } }, schedule: null, action: 'forward', destinations: [{ interface: 'lora', to: '{from}' }] },
  });
  assert.is(echo.status, 201, echo.text);
  const out = await a.call('POST', '/api/access-rules', {
    body: { name: 'to-b', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'lora', to: '{to}' }] },
  });
  assert.is(out.status, 201, out.text);
  const sent = await a.call('POST', '/api/messages/send', { body: { to: addressB, text: 'ping from the ridge' } });
  assert.is(sent.status, 202, sent.text);
  const deliveryId = sent.body.deliveries[0].id;
  const heard = await until('B to store the message', async () => {
    const m = await b.call('GET', '/api/messages?direction=inbound');
    return m.body.items.find((x: { text: string | null }) => x.text === 'ping from the ridge');
  });
  assert.is(heard.from, addressA, 'the sender is A\'s LXMF address');
  assert.is(heard.to, addressB);
  assert.is(heard.meta.signature, 'valid');
  assert.is(heard.meta.network, 'lxmf');
  assert.match(heard.meta.lxmf_hash, /^[0-9a-f]{64}$/);
  const delivered = await until('A\'s delivery delivered', async () => {
    const d = await a.call('GET', `/api/deliveries/${deliveryId}`);
    return d.body.state === 'delivered' && d.body;
  });
  assert.is(delivered.result.proof, 'received');
  const answer = await until('A to store B\'s answer', async () => {
    const m = await a.call('GET', '/api/messages?direction=inbound');
    return m.body.items.find((x: { text: string | null }) => x.text === 'ping from the ridge');
  });
  assert.is(answer.from, addressB);
  assert.is(answer.meta.signature, 'valid');
  // B's answer is delivered once A's proof reaches B.
  const stats = await until('B to receive A\'s proof of the answer', async () => {
    const s = await reticulumOf(b);
    return s.proofs_received >= 1 && s;
  });
  assert.ok(stats.proofs_sent >= 1 && stats.messages_in >= 1, JSON.stringify(stats));
  assert.is(stats.bad_signatures, 0);
});

test('a message to an LXMF address no announce was heard from waits, retryable, and says why', async () => {
  const sent = await a.call('POST', '/api/messages/send', { body: { to: '0123456789abcdef0123456789abcdef', text: 'anyone?' } });
  assert.is(sent.status, 202, sent.text);
  const d = await until('the first failed attempt', async () => {
    const r = await a.call('GET', `/api/deliveries/${sent.body.deliveries[0].id}`);
    return r.body.attempts >= 1 && r.body;
  });
  assert.match(d.last_error, /ERR_LXMF_UNKNOWN_DESTINATION: no announce heard from 0123456789abcdef0123456789abcdef/);
  assert.ok(['queued', 'retrying'].includes(d.state), d.state);
  await a.call('POST', `/api/deliveries/${d.id}/cancel`);
});

test('counters reach /metrics', async () => {
  const r = await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${b.ownerKey}` } });
  const text = await r.text();
  for (const name of ['reticulum.announces_sent', 'reticulum.announces_heard', 'reticulum.proofs_sent', 'reticulum.bad_signatures', 'reticulum.undecryptable']) {
    assert.match(text, new RegExp(`fieldbridge_device_value\\{[^}]*name="${name.replace('.', '\\.')}"[^}]*\\} \\d+`), name);
  }
});

test('the identity is kept in the database only: never in the logs or the configuration export; a restored backup answers at the same address', async () => {
  const db = new DatabaseSync(a.dbPath, { readOnly: true });
  const row = db.prepare("SELECT value FROM driver_state WHERE key = 'reticulum-identity'").get() as { value: string };
  db.close();
  assert.match(row.value, /^[0-9a-f]{128}$/);
  assert.not.ok(a.logs.some((l) => l.includes(row.value) || l.includes(row.value.slice(0, 64)) || l.includes(row.value.slice(64))), 'no part of the private key in the logs');
  const exported = await a.call('GET', '/api/config/export');
  assert.is(exported.status, 200);
  assert.not.ok(exported.text.includes(row.value.slice(0, 64)) || exported.text.includes(row.value.slice(64)), 'not exported');
  const dir = mkdtempSync(join(tmpdir(), 'fb-restore-'));
  try {
    await backupDatabase({ source: a.dbPath, target: join(dir, 'bridge.db') });
    copyFileSync(join(a.dir, 'owner.key'), join(dir, 'owner.key'));
    await a.stop();
    const restored = await startTestBridge({ dir });
    try {
      const again = await until('the restored interface online', async () => (await reticulumOf(restored))?.last_announce_at && (await reticulumOf(restored)));
      assert.is(again.lxmf_address, addressA, 'the same LXMF address');
      const sent = await restored.call('POST', '/api/access-rules', {
        body: { name: 'to-b-again', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'lora', to: '{to}' }] },
      });
      assert.ok(sent.status === 201 || sent.status === 409, sent.text);
      const m = await restored.call('POST', '/api/messages/send', { body: { to: addressB, text: 'back from a backup' } });
      const heard = await until('B to store it', async () => {
        const r = await b.call('GET', '/api/messages?direction=inbound');
        return r.body.items.find((x: { text: string | null }) => x.text === 'back from a backup');
      });
      assert.is(heard.from, addressA);
      assert.is(heard.meta.signature, 'valid', 'B still knows the key: nothing changed');
      await until('delivered', async () => (await restored.call('GET', `/api/deliveries/${m.body.deliveries[0].id}`)).body.state === 'delivered');
    } finally {
      await restored.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
