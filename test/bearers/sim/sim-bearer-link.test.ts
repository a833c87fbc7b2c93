import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resetSimChannels, SimChannels, simChannels } from '../../../src/bearers/sim/sim-bearer.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { frame, type Radio, simRadio } from './helpers.ts';

// The sim bearer's link switch (SimBearer.setLink, served by POST /api/sim/{id}/link): a
// running interface goes offline and comes back, settings and binding untouched, and the
// registry that finds a running bearer by interface id.

let clock = new FakeClock();
const radio = (name: string, settings: Record<string, unknown> = {}, registry?: SimChannels): Radio => simRadio(clock, name, settings, registry);
const OFFLINE = /^ERR_SIM_OFFLINE: the link of sim interface 'a' is down/;

test.before.each(() => {
  resetSimChannels();
  clock = new FakeClock();
});

test('the link can be set only while the bearer runs on a sim channel', async () => {
  const a = radio('a');
  assert.is(a.bearer.setLink(false), false, 'not started');
  await a.bearer.start('/dev/ttyUSB0');
  assert.is(a.bearer.setLink(false), false, 'not a sim device');
  assert.is(simChannels.running('ifc_a'), undefined);
  await a.bearer.start('sim://lab');
  await a.bearer.stop();
  assert.is(a.bearer.setLink(false), false, 'stopped');
  assert.is(a.states.length, 3, 'no state reported for a refused switch');
});

test('down: disconnected with ERR_SIM_OFFLINE, sends refused retryably, nothing heard; up: online, sends and hears', async () => {
  const a = radio('a');
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  assert.is(a.bearer.setLink(false), true);
  assert.is(a.bearer.linkUp, false);
  const down = a.states.at(-1)!;
  assert.equal([down.connected, down.phase], [false, 'closed']);
  assert.match(down.lastError!, OFFLINE);
  const refused = await a.bearer.send(frame());
  assert.equal([refused.ok, !refused.ok && refused.retryable], [false, true]);
  assert.match(!refused.ok ? refused.error : '', OFFLINE);
  assert.is(b.heard.length, 0, 'a refused send puts nothing on the air');
  assert.equal(await b.bearer.send(frame()), { ok: true, meta: { sim_channel: 'lab', heard_by: 0 } }, 'a down radio is off its channel');
  assert.is(a.heard.length, 0);
  assert.equal(a.bearer.stats(), { sent: 0, failed: 1, received: 0, channel: 'lab', behaviour: 'deliver', mtu: 230 }, 'still running on its channel');
  assert.ok(a.logs.some((l) => l.includes('sim_link_down')));

  assert.is(a.bearer.setLink(true), true);
  assert.equal(a.states.at(-1), { connected: true, lastError: null, phase: 'online' });
  assert.equal(await b.bearer.send(frame()), { ok: true, meta: { sim_channel: 'lab', heard_by: 1 } });
  assert.is(a.heard.length, 1);
  assert.equal(await a.bearer.send(frame()), { ok: true, meta: { sim_channel: 'lab', heard_by: 1 } });
  assert.ok(a.logs.some((l) => l.includes('sim_link_up')));
});

test('setting the state the link already has reports nothing', async () => {
  const a = radio('a');
  await a.bearer.start('sim://lab');
  assert.is(a.bearer.setLink(true), true);
  assert.is(a.states.length, 1);
  a.bearer.setLink(false);
  a.bearer.setLink(false);
  assert.is(a.states.length, 2);
  assert.is(simChannels.members('lab'), 0);
});

test('taking the link down ends sends waiting out latency or an acknowledgement with ERR_SIM_OFFLINE', async () => {
  const a = radio('a', { behaviour: 'never_ack', latency_ms: 1000 });
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  const onAir = a.bearer.send(frame({ text: 'out' }));
  clock.advance(1000);
  await Promise.resolve();
  const inLatency = a.bearer.send(frame({ text: 'not yet' }));
  assert.equal(b.heard.map((f) => f.text), ['out']);
  a.bearer.setLink(false);
  for (const r of await Promise.all([onAir, inLatency])) {
    assert.is(r.ok, false);
    if (!r.ok) {
      assert.is(r.retryable, true);
      assert.match(r.error, OFFLINE);
    }
  }
  assert.is(clock.pending(), 0);
  clock.advance(5000);
  assert.equal(b.heard.map((f) => f.text), ['out'], 'the send cut short in its latency never went out');
});

test('a send refused while down does not use up a planned failure of fail_then_deliver', async () => {
  const a = radio('a', { behaviour: 'fail_then_deliver', fail_count: 1 });
  await a.bearer.start('sim://lab');
  a.bearer.setLink(false);
  await a.bearer.send(frame());
  a.bearer.setLink(true);
  assert.equal(await a.bearer.send(frame()), { ok: false, retryable: true, error: 'simulated failure (behaviour fail_then_deliver, 1 of 1)' });
  assert.is((await a.bearer.send(frame())).ok, true);
});

test('stopping while down leaves the channel; the next start begins online', async () => {
  const a = radio('a');
  await a.bearer.start('sim://lab');
  a.bearer.setLink(false);
  await a.bearer.stop();
  assert.equal(a.states.at(-1), { connected: false, lastError: null, phase: 'closed' });
  assert.is(simChannels.members('lab'), 0);
  await a.bearer.start('sim://lab');
  assert.is(a.bearer.linkUp, true);
  assert.equal(a.states.at(-1), { connected: true, lastError: null, phase: 'online' });
  assert.is(simChannels.members('lab'), 1);
});

test('the registry finds the running bearer of an interface until it stops; a late stop of a replaced one keeps its successor', async () => {
  const a = radio('a');
  await a.bearer.start('sim://lab');
  assert.is(simChannels.running('ifc_a'), a.bearer);
  await a.bearer.start('sim://field');
  assert.is(simChannels.running('ifc_a'), a.bearer, 'a restart on another channel keeps it');
  const successor = radio('a');
  await successor.bearer.start('sim://lab');
  await a.bearer.stop();
  assert.is(simChannels.running('ifc_a'), successor.bearer);
  await successor.bearer.stop();
  assert.is(simChannels.running('ifc_a'), undefined);

  const mine = new SimChannels();
  const isolated = radio('a', {}, mine);
  await isolated.bearer.start('sim://lab');
  assert.is(mine.running('ifc_a'), isolated.bearer);
  assert.is(simChannels.running('ifc_a'), undefined, 'a bearer given its own registry is only there');
  mine.reset();
  assert.is(mine.running('ifc_a'), undefined);
});

test.run();
