import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RNODE_PRESETS } from '../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodePty, serveRNodeTcp, type SimTransport } from '../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../src/bearers/rnode/simulator/simulator.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

// Two bridges, each with an RNode interface over a real TCP byte stream to its own simulated
// RNode; both simulated radios share one simulated LoRa channel (docs/api.md 2.7, issue 6).

const channel = new RNodeChannel({ linkQuality: () => ({ rssi_dbm: -87, snr_db: 6.25 }) });
const simA = new RNodeSimulator({ name: 'radio-a', channel });
const simB = new RNodeSimulator({ name: 'radio-b', channel });
let tcpA: SimTransport;
let tcpB: SimTransport;
let a: TestBridge;
let b: TestBridge;

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const connected = (t: TestBridge, name: string) =>
  until(`${name} connected`, async () => {
    const h = await t.call('GET', '/api/interfaces/health');
    return h.body.items.find((i: { name: string; connected: boolean }) => i.name === name && i.connected);
  });

test.before(async () => {
  tcpA = await serveRNodeTcp(simA, { port: 0 });
  tcpB = await serveRNodeTcp(simB, { port: 0 });
  a = await startTestBridge();
  b = await startTestBridge();
  for (const [t, transport] of [[a, tcpA], [b, tcpB]] as const) {
    const r = await t.call('POST', '/api/interfaces', { body: { name: 'lora', kind: 'rnode', device: transport.device, settings: { preset: 'eu-868' } } });
    assert.is(r.status, 201, r.text);
  }
  await a.call('POST', '/api/interfaces', { body: { name: 'ops', kind: 'sim', device: 'sim://ops-a' } });
  const rule = await a.call('POST', '/api/access-rules', {
    body: { name: 'ops-to-lora', match: { direction: 'inbound', interfaces: ['ops'] }, schedule: null, action: 'forward', destinations: [{ interface: 'lora', to: 'broadcast' }] },
  });
  assert.is(rule.status, 201, rule.text);
  await connected(a, 'lora');
  await connected(b, 'lora');
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  await tcpA?.close();
  await tcpB?.close();
  simA.close();
  simB.close();
});

test('the simulator holds exactly the configured eu-868 values', () => {
  const eu = RNODE_PRESETS.find((p) => p.name === 'eu-868')!;
  assert.equal(
    { f: simA.config.frequency_hz, bw: simA.config.bandwidth_hz, sf: simA.config.sf, cr: simA.config.cr, tx: simA.config.tx_power_dbm, on: simA.config.radio_on },
    { f: eu.frequency_hz, bw: eu.bandwidth_hz, sf: eu.sf, cr: eu.cr, tx: eu.tx_power_dbm, on: true },
  );
});

test('a message crosses from bridge A to bridge B through A\'s access rule; B stores RSSI and SNR', async () => {
  const sent = await a.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!0badf00d', text: 'hello over lora', interface: 'ops' } });
  assert.is(sent.status, 202, sent.text);
  assert.is(sent.body.deliveries.length, 1);
  const heard = await until('B to store the message', async () => {
    const m = await b.call('GET', '/api/messages?direction=inbound');
    return m.body.items.find((x: { text: string | null }) => x.text === 'hello over lora');
  });
  assert.is(heard.meta.rssi_dbm, -87);
  assert.is(heard.meta.snr_db, 6.25);
  const d = await until('A\'s delivery to finish', async () => {
    const r = await a.call('GET', `/api/deliveries/${sent.body.deliveries[0].id}`);
    return r.body.state === 'delivered' && r.body;
  });
  assert.is(d.attempts, 1);
});

test('the stats endpoint reports every docs/api.md 2.7 value as the radio reported it', async () => {
  const s = await until('channel stats', async () => {
    const r = await b.call('GET', '/api/routing/ifaces/lora/stats');
    return r.body.airtime_short_pct !== null && r.body.last_rssi_dbm !== null && r.body;
  });
  assert.is(s.frequency_hz, 867_200_000);
  assert.is(s.bandwidth_hz, 125_000);
  assert.is(s.sf, 8);
  assert.is(s.cr, 5);
  assert.is(s.radio_on, true);
  assert.is(s.last_rssi_dbm, -87);
  assert.is(s.last_snr_db, 6.25);
  for (const k of ['airtime_short_pct', 'airtime_long_pct', 'channel_load_short_pct', 'channel_load_long_pct']) assert.type(s[k], 'number', k);
  assert.is(s.bitrate_bps, 3125);
  const doc = (await b.call('GET', '/api/openapi.json')).body;
  assert.match(doc.components.schemas.RNodeStats.properties.frequency_hz.description, /Hz/);
  assert.match(doc.components.schemas.RNodeStats.properties.bitrate_bps.description, /bit\/s/);
});

test('presets endpoint is exactly the docs/api.md 2.7 table', async () => {
  const r = await a.call('GET', '/api/routing/rnode/presets');
  assert.equal(
    r.body.items.map((p: Record<string, number | string>) => [p.name, p.frequency_hz, p.bandwidth_hz, p.sf, p.cr, p.tx_power_dbm]),
    [
      ['us-915', 915_000_000, 125_000, 7, 5, 22],
      ['eu-868', 867_200_000, 125_000, 8, 5, 14],
      ['au-915', 915_000_000, 125_000, 7, 5, 22],
      ['ism-433', 433_000_000, 125_000, 7, 5, 12],
    ],
  );
});

test('over TCP, every preset is configured and echoed exactly', async () => {
  for (const preset of RNODE_PRESETS) {
    const r = await a.call('PUT', '/api/routing/ifaces/lora', { body: { settings: { preset: preset.name, st_alock: 10, lt_alock: 1 } } });
    assert.is(r.status, 200, r.text);
    await until(`preset ${preset.name}`, () =>
      simA.config.frequency_hz === preset.frequency_hz && simA.config.sf === preset.sf && simA.config.tx_power_dbm === preset.tx_power_dbm && simA.config.radio_on,
    );
    await connected(a, 'lora');
    assert.equal(
      { bw: simA.config.bandwidth_hz, cr: simA.config.cr, st: simA.config.st_alock, lt: simA.config.lt_alock },
      { bw: preset.bandwidth_hz, cr: preset.cr, st: 10, lt: 1 },
    );
  }
});

test('over a pseudo-terminal through the real serial binding, a preset comes up and is echoed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-rnode-pty-'));
  const sim = new RNodeSimulator({ name: 'radio-pty', channel });
  const pty = await serveRNodePty(sim, { path: join(dir, 'rnode') });
  try {
    const r = await b.call('POST', '/api/interfaces', { body: { name: 'lora-usb', kind: 'rnode', device: pty.device, settings: { preset: 'ism-433' } } });
    assert.is(r.status, 201, r.text);
    await connected(b, 'lora-usb');
    assert.is(sim.config.frequency_hz, 433_000_000);
    assert.is(sim.config.tx_power_dbm, 12);
    assert.is((await b.call('DELETE', '/api/interfaces/lora-usb')).status, 200);
  } finally {
    await pty.close();
    sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the ports endpoint lists serial ports with the port value to use, probing nothing', async () => {
  const r = await a.call('GET', '/api/routing/rnode/ports');
  assert.is(r.status, 200);
  assert.ok(Array.isArray(r.body.items));
  for (const p of r.body.items) {
    assert.type(p.path, 'string');
    assert.type(p.port, 'string');
    assert.type(p.label, 'string');
  }
  assert.is((await a.call('GET', '/api/routing/rnode/ports', { key: null })).status, 401);
});

test('a non-RNode interface is not an RNode routing interface (404)', async () => {
  assert.is((await a.call('GET', '/api/routing/ifaces/ops/stats')).status, 404);
  assert.is((await a.call('GET', '/api/routing/ifaces/nope')).status, 404);
  const bad = await a.call('PUT', '/api/routing/ifaces/lora', { body: { settings: { preset: 'mars-1' } } });
  assert.is(bad.status, 400);
  assert.equal(bad.body.errors.map((e: { path: string }) => e.path), ['body.settings.preset']);
});

test('bad RNode settings are refused naming every field', async () => {
  const r = await a.call('POST', '/api/interfaces', { body: { name: 'lora2', kind: 'rnode', settings: { sf: 13, cr: 9 } } });
  assert.is(r.status, 400);
  const paths = r.body.errors.map((e: { path: string }) => e.path);
  for (const p of ['body.settings.sf', 'body.settings.cr']) assert.ok(paths.includes(p), `${p} in ${paths}`);
});

test.run();
