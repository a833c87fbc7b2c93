import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SendResult } from '../../../src/bearers/bearer.ts';
import {
  resetSimChannels,
  SimBearer,
  SimChannels,
  simChannelOf,
  simChannels,
  SimDevice,
  SimSettings,
} from '../../../src/bearers/sim/sim-bearer.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { DeviceError } from '../../../src/bearers/device-error.ts';
import { deviceProblem } from '../../../src/bridge/device-problems.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';
import { frame, type Radio, simRadio } from './helpers.ts';

let clock = new FakeClock();

const radio = (name: string, settings: Record<string, unknown> = {}, registry?: SimChannels): Radio => simRadio(clock, name, settings, registry);

const reset = () => {
  resetSimChannels();
  clock = new FakeClock();
};

test.before.each(reset);

// ---- settings and devices ----

test('settings default to an instant, delivering radio with a 230-byte mtu', () => {
  assert.equal(SimSettings.parse({}), { behaviour: 'deliver', fail_count: 1, latency_ms: 0, mtu: 230 });
  assert.is(radio('a').bearer.mtu, 230);
  assert.is(radio('b', { mtu: 50 }).bearer.mtu, 50);
  assert.is(radio('c').bearer.kind, 'sim');
});

test('bad settings are refused when the bearer is made, every field named', () => {
  try {
    radio('a', { behaviour: 'flaky', fail_count: -1, latency_ms: 1.5, mtu: 0, colour: 'red' });
    assert.unreachable('should throw');
  } catch (error) {
    assert.instance(error, DeviceError);
    const e = error as DeviceError;
    assert.is(e.code, 'ERR_BEARER_SETTINGS');
    assert.is(deviceProblem(e)!.status, 400);
    const paths = e.facts.fields!.map((x) => x.path);
    for (const p of ['settings.behaviour', 'settings.fail_count', 'settings.latency_ms', 'settings.mtu']) assert.ok(paths.includes(p), p);
    assert.ok(e.facts.fields!.some((x) => /colour/.test(x.message)));
    assert.is(e.facts.fields!.find((x) => x.path === 'settings.behaviour')!.message, 'behaviour must be deliver, fail, fail_then_deliver, ack_after, never_ack or fail_after; got "flaky"');
    assert.is(e.facts.fields!.find((x) => x.path === 'settings.latency_ms')!.message, 'latency_ms must be a whole number of milliseconds; got 1.5');
  }
  assert.match(SimSettings.safeParse({ latency_ms: 60_001 }).error!.issues[0].message, /latency_ms must be at most 60000/);
  assert.ok(SimSettings.safeParse({ latency_ms: 60_000 }).success);
});

test('sim devices are sim://<channel>', () => {
  for (const ok of ['sim://lab', 'sim://ch-1.test_2', 'sim://A']) {
    assert.ok(SimDevice.safeParse(ok).success, ok);
  }
  for (const bad of ['sim://', 'sim:lab', 'tcp://host', 'sim://has space', 'sim://a/b', `sim://${'x'.repeat(65)}`, 'sim://-lead']) {
    const r = SimDevice.safeParse(bad);
    assert.ok(!r.success, bad);
    if (!r.success) assert.match(r.error.issues[0].message, /device must be sim:\/\/<channel>/);
  }
  assert.is(simChannelOf('sim://lab'), 'lab');
  assert.is(simChannelOf('/dev/ttyUSB0'), null);
});

// ---- lifecycle ----

test('start reports connected, stop reports disconnected; sending needs a start', async () => {
  const a = radio('a');
  assert.equal(await a.bearer.send(frame()), { ok: false, retryable: true, error: 'not started' });
  await a.bearer.start('sim://lab');
  assert.equal(a.states, [{ connected: true, lastError: null, phase: 'online' }]);
  assert.is((await a.bearer.send(frame())).ok, true);
  await a.bearer.stop();
  assert.equal(a.states[1], { connected: false, lastError: null, phase: 'closed' });
  assert.equal(await a.bearer.send(frame()), { ok: false, retryable: true, error: 'not started' });
  await a.bearer.stop(); // twice is harmless
  assert.is(a.states.length, 2);
});

test('a device that is not sim:// is a disconnected state, not a thrown error', async () => {
  const a = radio('a');
  await a.bearer.start('/dev/ttyUSB0');
  assert.equal(a.states, [{ connected: false, lastError: 'not a sim device: "/dev/ttyUSB0" (expected sim://<channel>)', phase: 'closed' }]);
  assert.equal(await a.bearer.send(frame()), { ok: false, retryable: true, error: 'not started' });
  assert.ok(a.logs.some((l) => l.includes('sim_bad_device')));
});

// ---- the shared channel ----

test('radios on one channel hear each other, never themselves; other channels hear nothing', async () => {
  const a = radio('a');
  const b = radio('b');
  const c = radio('c');
  const other = radio('other');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  await c.bearer.start('sim://lab');
  await other.bearer.start('sim://field');
  const sent = await a.bearer.send(frame({ to: '^all', channel: 3, text: 'SOS', payload: new TextEncoder().encode('SOS') }));
  assert.equal(sent, { ok: true, meta: { sim_channel: 'lab', heard_by: 2 } });
  assert.is(a.heard.length, 0);
  assert.is(other.heard.length, 0);
  for (const r of [b, c]) {
    assert.is(r.heard.length, 1);
    const f = r.heard[0];
    assert.equal({ ...f, payload: [...f.payload!] }, {
      from: 'a',
      to: '^all',
      channel: 3,
      kind: 'text',
      text: 'SOS',
      payload: [83, 79, 83],
      meta: { sim_channel: 'lab', sender_interface_id: 'ifc_a' },
    });
  }
  assert.equal(a.bearer.stats(), { sent: 1, failed: 0, received: 0, channel: 'lab', behaviour: 'deliver', mtu: 230 });
  assert.equal(b.bearer.stats(), { sent: 0, failed: 0, received: 1, channel: 'lab', behaviour: 'deliver', mtu: 230 });
});

test('each listener gets its own copy of the payload', async () => {
  const a = radio('a');
  const b = radio('b');
  const c = radio('c');
  for (const r of [a, b, c]) await r.bearer.start('sim://lab');
  const payload = new Uint8Array([1, 2, 3]);
  await a.bearer.send(frame({ text: null, kind: 'data', payload }));
  b.heard[0].payload![0] = 99;
  assert.equal([...c.heard[0].payload!], [1, 2, 3]);
  assert.equal([...payload], [1, 2, 3]);
});

test('a stopped radio hears nothing; restarting on another channel leaves the first', async () => {
  const a = radio('a');
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  await b.bearer.stop();
  assert.equal((await a.bearer.send(frame())), { ok: true, meta: { sim_channel: 'lab', heard_by: 0 } });
  await b.bearer.start('sim://lab');
  await b.bearer.start('sim://field');
  assert.is(simChannels.members('lab'), 1);
  assert.is(simChannels.members('field'), 1);
  await a.bearer.send(frame());
  assert.is(b.heard.length, 0);
});

test('a listener whose handler throws does not break the sender or the others', async () => {
  const a = radio('a');
  const c = radio('c');
  const logs: string[] = [];
  const broken = new SimBearer(bearerContext({
    interfaceId: 'ifc_x',
    interfaceName: 'x',
    settings: {},
    clock,
    log: createLogger({ format: 'json', write: (l) => logs.push(l) }),
    events: { receive: () => { throw new Error('handler bug'); }, state: () => {} },
  }));
  await a.bearer.start('sim://lab');
  await broken.start('sim://lab');
  await c.bearer.start('sim://lab');
  assert.equal(await a.bearer.send(frame()), { ok: true, meta: { sim_channel: 'lab', heard_by: 2 } });
  assert.is(c.heard.length, 1);
  assert.ok(logs.some((l) => l.includes('sim_receive_handler_failed') && l.includes('handler bug')));
});

test('resetting the registry and separate registries isolate radios', async () => {
  const a = radio('a');
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  resetSimChannels();
  await a.bearer.send(frame());
  assert.is(b.heard.length, 0);
  const mine = new SimChannels();
  const c = radio('c', {}, mine);
  const d = radio('d');
  await c.bearer.start('sim://lab');
  await d.bearer.start('sim://lab');
  await c.bearer.send(frame());
  assert.is(d.heard.length, 0);
});

// ---- behaviours ----

test('behaviour fail fails every send, retryably, and counts it', async () => {
  const a = radio('a', { behaviour: 'fail' });
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  for (let i = 0; i < 3; i++) assert.equal(await a.bearer.send(frame()), { ok: false, error: 'simulated failure (behaviour fail)', retryable: true });
  assert.is(b.heard.length, 0);
  assert.equal([a.bearer.stats().sent, a.bearer.stats().failed], [0, 3]);
});

test('fail_then_deliver fails the first fail_count sends after each start, then delivers', async () => {
  const a = radio('a', { behaviour: 'fail_then_deliver', fail_count: 2 });
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  const results = [];
  for (let i = 0; i < 4; i++) results.push(await a.bearer.send(frame()));
  assert.equal(results.map((r) => r.ok), [false, false, true, true]);
  assert.equal(results[0], { ok: false, retryable: true, error: 'simulated failure (behaviour fail_then_deliver, 1 of 2)' });
  assert.is(b.heard.length, 2);
  await a.bearer.stop();
  await a.bearer.start('sim://lab');
  assert.is((await a.bearer.send(frame())).ok, false);
  const zero = radio('z', { behaviour: 'fail_then_deliver', fail_count: 0 });
  await zero.bearer.start('sim://lab');
  assert.is((await zero.bearer.send(frame())).ok, true);
});

test('a frame over the mtu is refused without retry and does not use up a failure', async () => {
  const a = radio('a', { mtu: 5, behaviour: 'fail_then_deliver', fail_count: 1 });
  await a.bearer.start('sim://lab');
  assert.equal(await a.bearer.send(frame({ payload: new Uint8Array(6) })), { ok: false, retryable: false, error: 'frame of 6 bytes exceeds the sim mtu of 5 bytes' });
  assert.is((await a.bearer.send(frame({ payload: new Uint8Array(5) }))).ok, false); // the one planned failure
  assert.is((await a.bearer.send(frame({ payload: new Uint8Array(5) }))).ok, true);
  assert.is(a.bearer.stats().failed, 2);
});

// ---- latency ----

test('a send takes latency_ms on the injected clock', async () => {
  const a = radio('a', { latency_ms: 1500 });
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  let result: SendResult | undefined;
  const pending = a.bearer.send(frame()).then((r) => (result = r));
  await Promise.resolve();
  clock.advance(1499);
  await Promise.resolve();
  assert.is(result, undefined);
  assert.is(b.heard.length, 0);
  clock.advance(1);
  await pending;
  assert.equal(result, { ok: true, meta: { sim_channel: 'lab', heard_by: 1 } });
  assert.is(b.heard.length, 1);
  assert.is(clock.pending(), 0);
});

test('stopping during latency ends waiting sends as retryable failures and clears their timers', async () => {
  const a = radio('a', { latency_ms: 10_000 });
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  const first = a.bearer.send(frame());
  const second = a.bearer.send(frame());
  assert.is(clock.pending(), 2);
  await a.bearer.stop();
  assert.equal(await first, { ok: false, retryable: true, error: 'stopped while sending' });
  assert.equal(await second, { ok: false, retryable: true, error: 'stopped while sending' });
  assert.is(clock.pending(), 0);
  clock.advance(20_000);
  assert.is(b.heard.length, 0);
});

test('with latency, fail_then_deliver fails in the order sends were made', async () => {
  const a = radio('a', { latency_ms: 100, behaviour: 'fail_then_deliver', fail_count: 1 });
  await a.bearer.start('sim://lab');
  const sends = [a.bearer.send(frame()), a.bearer.send(frame())];
  clock.advance(100);
  const [one, two] = await Promise.all(sends);
  assert.equal([one.ok, two.ok], [false, true]);
});

test.run();
