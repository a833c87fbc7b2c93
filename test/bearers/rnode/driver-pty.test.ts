import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../src/bearers/rnode/driver.ts';
import { RNODE_PRESETS } from '../../../src/bearers/rnode/radio.ts';
import { RNodeChannel } from '../../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodePty, serveRNodeTcp, type SimTransport } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { FakeClock, systemClock, type Clock } from '../../../src/lib/clock.ts';
import { openTestLink, recorder, waitFor } from './helpers.ts';

// The RNode driver over a real pseudo-terminal: socat makes the pair, the simulator holds one
// end through serialport, the driver opens the other with the real serialport binding.

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const cleanups: (() => Promise<void>)[] = [];
let n = 0;

async function ptyRig(settings: Record<string, unknown>, o: { channel?: RNodeChannel; clock?: Clock } = {}) {
  const sim = new RNodeSimulator({ name: `pty${++n}`, channel: o.channel });
  const transport = await serveRNodePty(sim, { path: join(dir, `rnode${n}`) });
  const rec = recorder(settings, o.clock ?? systemClock, `pty${n}`);
  const bearer = new RNodeBearer(rec.ctx, { openLink: openTestLink });
  cleanups.push(async () => {
    await bearer.stop();
    await transport.close();
    sim.close();
  });
  await bearer.start(transport.device);
  return { sim, transport, bearer, rec };
}

test.after.each(async () => {
  for (const c of cleanups.splice(0)) await c();
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

for (const preset of RNODE_PRESETS) {
  test(`pty: init with preset ${preset.name}; the simulator holds exactly the configured values`, async () => {
    const r = await ptyRig({ preset: preset.name, st_alock: 5, lt_alock: 0.5 });
    await waitFor('online', () => r.bearer.phase === 'online');
    assert.equal(r.sim.config, {
      frequency_hz: preset.frequency_hz,
      bandwidth_hz: preset.bandwidth_hz,
      sf: preset.sf,
      cr: preset.cr,
      tx_power_dbm: preset.tx_power_dbm,
      radio_on: true,
      st_alock: 5,
      lt_alock: 0.5,
    });
  });
}

test('pty and TCP RNodes on one channel exchange frames both ways with RSSI and SNR', async () => {
  const channel = new RNodeChannel({ linkQuality: (from) => (from.startsWith('pty') ? { rssi_dbm: -88, snr_db: 9.5 } : { rssi_dbm: -101, snr_db: -3.25 }) });
  const p = await ptyRig({ preset: 'ism-433' }, { channel });
  const sim = new RNodeSimulator({ name: 'tcp', channel });
  const transport: SimTransport = await serveRNodeTcp(sim, { port: 0 });
  const rec = recorder({ preset: 'ism-433' }, systemClock, 'tcp');
  const t = new RNodeBearer(rec.ctx, { openLink: openTestLink });
  cleanups.push(async () => {
    await t.stop();
    await transport.close();
    sim.close();
  });
  await t.start(transport.device);
  await waitFor('both online', () => p.bearer.phase === 'online' && t.phase === 'online');
  const payload = (s: string) => ({ deliveryId: 'd', messageId: 'm', to: 'broadcast', channel: null, kind: 'text' as const, text: s, payload: new TextEncoder().encode(s) });
  assert.equal(await p.bearer.send(payload('over the pty')), { ok: true });
  await waitFor('tcp side receives', () => rec.received.length === 1);
  assert.equal([rec.received[0].text, rec.received[0].meta], ['over the pty', { rssi_dbm: -88, snr_db: 9.5 }]);
  assert.equal(await t.send(payload('over tcp')), { ok: true });
  await waitFor('pty side receives', () => p.rec.received.length === 1);
  assert.equal([p.rec.received[0].text, p.rec.received[0].meta], ['over tcp', { rssi_dbm: -101, snr_db: -3.25 }]);
});

test('pty: the device vanishes and comes back under the same path; the driver reconnects', async () => {
  const clock = new FakeClock();
  const r = await ptyRig({ preset: 'eu-868' }, { clock });
  await waitFor('online', () => r.bearer.phase === 'online');
  await r.transport.stop();
  await waitFor('backoff', () => r.bearer.phase === 'backoff');
  assert.is(r.rec.last()!.connected, false);
  assert.ok(r.rec.last()!.lastError);
  await r.transport.start();
  clock.advance(1_000);
  await waitFor('online again', () => r.bearer.phase === 'online');
  assert.is(r.sim.config.radio_on, true);
});

test.run();
