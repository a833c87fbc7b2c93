import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SendResult } from '../../../src/bearers/bearer.ts';
import { resetSimChannels, SimSettings } from '../../../src/bearers/sim/sim-bearer.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { frame, type Radio, simRadio } from './helpers.ts';

// The sim bearer's acknowledgement behaviours (src/bearers/sim/sim-bearer.ts): ack_after,
// never_ack and fail_after, driven by a fake clock (docs/style.md habit 5).

let clock = new FakeClock();
const radio = (name: string, settings: Record<string, unknown> = {}): Radio => simRadio(clock, name, settings);

/** A send whose answer the test looks at without awaiting it. */
function track(p: Promise<SendResult>): { result?: SendResult } {
  const t: { result?: SendResult } = {};
  void p.then((r) => (t.result = r));
  return t;
}
const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

test.before.each(() => {
  resetSimChannels();
  clock = new FakeClock();
});

async function pair(settings: Record<string, unknown>): Promise<{ a: Radio; b: Radio }> {
  const a = radio('a', settings);
  const b = radio('b');
  await a.bearer.start('sim://lab');
  await b.bearer.start('sim://lab');
  return { a, b };
}

// ---- settings ----

test('the ack fields are optional: settings stored before them parse as they did', () => {
  assert.equal(SimSettings.parse({ behaviour: 'ack_after' }), { behaviour: 'ack_after', fail_count: 1, latency_ms: 0, mtu: 230 });
  assert.equal(SimSettings.parse({ behaviour: 'fail_after', ack_ms: 250, error: 'ERR_NO_ROUTE: simulated', retryable: false }), {
    behaviour: 'fail_after', fail_count: 1, latency_ms: 0, mtu: 230, ack_ms: 250, error: 'ERR_NO_ROUTE: simulated', retryable: false,
  });
  assert.ok(SimSettings.safeParse({ behaviour: 'never_ack', ack_ms: 0 }).success);
  assert.ok(SimSettings.safeParse({ ack_ms: 3_600_000 }).success);
});

test('bad ack fields are all named, each with what it must be and what it got', () => {
  const messages = (settings: Record<string, unknown>) => SimSettings.safeParse(settings).error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  assert.equal(messages({ behaviour: 'ack', ack_ms: -1, error: '', retryable: 'yes' }), [
    'behaviour: behaviour must be deliver, fail, fail_then_deliver, ack_after, never_ack or fail_after; got "ack"',
    'ack_ms: ack_ms must be 0 or more; got -1',
    'error: error must be a text of 1 to 500 characters; got ""',
    'retryable: retryable must be true or false; got "yes"',
  ]);
  assert.equal(messages({ ack_ms: 1.5 }), ['ack_ms: ack_ms must be a whole number of milliseconds; got 1.5']);
  assert.equal(messages({ ack_ms: 3_600_001 }), ['ack_ms: ack_ms must be at most 3600000; got 3600001']);
  assert.equal(messages({ ack_ms: '5s' }), ['ack_ms: ack_ms must be a whole number of milliseconds; got "5s"']);
  assert.equal(messages({ error: 'x'.repeat(501) }), [`error: error must be a text of 1 to 500 characters; got "${'x'.repeat(39)}...`]);
});

test('the waiting behaviours take 8 sends at once and name how long a send may take; the others keep the defaults', () => {
  for (const behaviour of ['deliver', 'fail', 'fail_then_deliver']) {
    const { bearer } = radio(behaviour, { behaviour, latency_ms: 500 });
    assert.equal([bearer.concurrency, bearer.maxSendMs], [undefined, undefined], behaviour);
  }
  const limits = (settings: Record<string, unknown>) => {
    const { bearer } = radio('x', settings);
    return [bearer.concurrency, bearer.maxSendMs];
  };
  assert.equal(limits({ behaviour: 'ack_after', ack_ms: 5000, latency_ms: 200 }), [8, 65_200]);
  assert.equal(limits({ behaviour: 'fail_after' }), [8, 61_000], 'ack_ms defaults to 1000');
  assert.equal(limits({ behaviour: 'never_ack' }), [8, 86_400_000], 'a day: the dispatcher\'s 120 s do not end it');
});

// ---- ack_after ----

test('ack_after: the frame goes out at once, the send succeeds ack_ms later', async () => {
  const { a, b } = await pair({ behaviour: 'ack_after', ack_ms: 5000 });
  const sent = track(a.bearer.send(frame()));
  assert.is(b.heard.length, 1, 'peers hear the frame before the acknowledgement');
  clock.advance(4999);
  await flush();
  assert.is(sent.result, undefined);
  clock.advance(1);
  await flush();
  assert.equal(sent.result, { ok: true, meta: { sim_channel: 'lab', heard_by: 1, acknowledged_after_ms: 5000 } });
  assert.is(clock.pending(), 0);
  assert.equal([a.bearer.stats().sent, a.bearer.stats().failed], [1, 0]);
});

test('ack_after waits out latency_ms before the frame goes out, then ack_ms (default 1000)', async () => {
  const { a, b } = await pair({ behaviour: 'ack_after', latency_ms: 300 });
  const sent = track(a.bearer.send(frame()));
  clock.advance(299);
  await flush();
  assert.is(b.heard.length, 0);
  clock.advance(1);
  await flush();
  assert.is(b.heard.length, 1);
  clock.advance(999);
  await flush();
  assert.is(sent.result, undefined);
  clock.advance(1);
  await flush();
  assert.equal(sent.result, { ok: true, meta: { sim_channel: 'lab', heard_by: 1, acknowledged_after_ms: 1000 } });
});

test('several sends wait for their acknowledgements at once, each answered ack_ms after it went out', async () => {
  const { a, b } = await pair({ behaviour: 'ack_after', ack_ms: 1000 });
  const sends = [];
  for (let i = 0; i < 8; i++) {
    sends.push(track(a.bearer.send(frame({ text: `m${i}` }))));
    clock.advance(100);
    await flush();
  }
  assert.equal(b.heard.map((f) => f.text), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'], 'every frame went out without waiting for the others');
  // 800 ms after the first went out; 300 more: m0 and m1 (out at 0 and 100) are acknowledged.
  clock.advance(300);
  await flush();
  assert.equal(sends.map((s) => s.result?.ok ?? 'waiting'), [true, true, 'waiting', 'waiting', 'waiting', 'waiting', 'waiting', 'waiting']);
  clock.advance(599);
  await flush();
  assert.is(sends[7].result, undefined, 'm7 went out at 700: acknowledged at 1700');
  clock.advance(1);
  await flush();
  assert.ok(sends.every((s) => s.result?.ok === true));
});

// ---- never_ack ----

test('never_ack: the frame goes out and the send stays open however long; stopping ends it, retryably', async () => {
  const { a, b } = await pair({ behaviour: 'never_ack' });
  const first = track(a.bearer.send(frame({ text: 'one' })));
  const second = track(a.bearer.send(frame({ text: 'two' })));
  assert.equal(b.heard.map((f) => f.text), ['one', 'two'], 'an open send does not hold up the next');
  clock.advance(10 * 24 * 60 * 60 * 1000);
  await flush();
  assert.equal([first.result, second.result], [undefined, undefined]);
  assert.is(clock.pending(), 0, 'no timer: only stop or a link down end the wait');
  await a.bearer.stop();
  await flush();
  for (const s of [first, second]) assert.equal(s.result, { ok: false, retryable: true, error: 'stopped while waiting for an acknowledgement' });
  assert.equal([a.bearer.stats().sent, a.bearer.stats().failed], [0, 2]);
});

// ---- fail_after ----

test('fail_after: nothing goes out; after ack_ms the send fails, retryably unless told', async () => {
  const { a, b } = await pair({ behaviour: 'fail_after', ack_ms: 2000 });
  const sent = track(a.bearer.send(frame()));
  clock.advance(1999);
  await flush();
  assert.is(sent.result, undefined);
  clock.advance(1);
  await flush();
  assert.equal(sent.result, { ok: false, retryable: true, error: 'simulated failure (behaviour fail_after)' });
  assert.is(b.heard.length, 0);

  const named = radio('named', { behaviour: 'fail_after', ack_ms: 0, error: 'ERR_MESHTASTIC_NO_ROUTE: simulated', retryable: false });
  await named.bearer.start('sim://lab');
  const answer = named.bearer.send(frame());
  clock.advance(0);
  assert.equal(await answer, { ok: false, retryable: false, error: 'ERR_MESHTASTIC_NO_ROUTE: simulated' });
  assert.is(b.heard.length, 0);
  assert.is(named.bearer.stats().failed, 1);
});

test('a frame over the mtu is refused at once on every waiting behaviour', async () => {
  for (const behaviour of ['ack_after', 'never_ack', 'fail_after']) {
    const r = radio(behaviour, { behaviour, mtu: 4 });
    await r.bearer.start('sim://lab');
    assert.equal(await r.bearer.send(frame()), { ok: false, retryable: false, error: 'frame of 5 bytes exceeds the sim mtu of 4 bytes' });
  }
});

// ---- stop ----

test('stopping releases every waiting send (latency, acknowledgement, never) and clears their timers', async () => {
  const acking = radio('acking', { behaviour: 'ack_after', ack_ms: 60_000 });
  const slow = radio('slow', { behaviour: 'ack_after', latency_ms: 5000 });
  const failing = radio('failing', { behaviour: 'fail_after', ack_ms: 60_000 });
  const silent = radio('silent', { behaviour: 'never_ack' });
  for (const r of [acking, slow, failing, silent]) await r.bearer.start('sim://lab');
  const sends = [acking, slow, failing, silent].map((r) => r.bearer.send(frame()));
  assert.is(clock.pending(), 3);
  for (const r of [acking, slow, failing, silent]) await r.bearer.stop();
  assert.equal(await Promise.all(sends), [
    { ok: false, retryable: true, error: 'stopped while waiting for an acknowledgement' },
    { ok: false, retryable: true, error: 'stopped while sending' },
    { ok: false, retryable: true, error: 'stopped while waiting for an acknowledgement' },
    { ok: false, retryable: true, error: 'stopped while waiting for an acknowledgement' },
  ]);
  assert.is(clock.pending(), 0);
});

test.run();
