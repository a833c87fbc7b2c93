import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerState, InboundFrame, OutboundFrame, SendResult } from '../../../src/bearers/bearer.ts';
import { IridiumBearer, type IridiumTiming } from '../../../src/bearers/iridium/driver.ts';
import { iridiumSimGateway, openIridiumSimLink, type IridiumSimLink } from '../../../src/bearers/iridium/simulator/link.ts';
import type { IridiumModemOptions } from '../../../src/bearers/iridium/simulator/modem.ts';
import { FakeClock, systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext, memoryState } from '../../helpers/bearer-context.ts';

// The Iridium driver against the SBD modem simulator over sim:// (an in-process byte stream):
// bring-up and identity, a send delivered with its MOMSN, failed sessions retried without
// rewriting the MO buffer, pacing, payload limits, RockBLOCK addressing, MT messages from a
// ring alert (the second through MT queued), bad MT checksums, a database that refuses a
// message, the signal wait, and the faults: a modem that stops answering, garbage, a reset in
// the middle of a session. The budget through a whole bridge: test/e2e/iridium-budget.test.ts.

let keepAlive: ReturnType<typeof setInterval>;
test.before(() => void (keepAlive = setInterval(() => {}, 1000)));
test.after(() => clearInterval(keepAlive));

const FAST = { session_interval_s: 0, failure_backoff_s: 0 };
const TIMING: Partial<IridiumTiming> = { backoffInitialMs: 30, backoffMaxMs: 200, commandTimeoutMs: 500, writeTimeoutMs: 2000, noServiceHoldMs: 0 };
let channels = 0;

interface Rig {
  bearer: IridiumBearer;
  channel: string;
  states: BearerState[];
  heard: InboundFrame[];
  links: IridiumSimLink[];
  logs: string[];
  state: ReturnType<typeof memoryState>;
  /** What receive() answers (false: the database failed). */
  store: boolean;
  /** Times the driver told (BearerEvents.time). */
  times: number[];
}

function rig(settings: Record<string, unknown> = {}, sim: Omit<IridiumModemOptions, 'gateway'> = {}, channel = `iridium-driver-${process.pid}-${++channels}`, state = memoryState(), timing: Partial<IridiumTiming> = {}): Rig {
  const r = { channel, states: [], heard: [], links: [], logs: [], state, store: true, times: [] } as unknown as Rig;
  r.bearer = new IridiumBearer(
    bearerContext({
      interfaceId: `ifc_${channel}`, interfaceName: 'sat', settings: { ...FAST, ...settings }, clock: systemClock, state,
      log: createLogger({ level: 'debug', format: 'json', write: (l) => r.logs.push(l) }),
      events: {
        receive: (f) => {
          if (!r.store) return false;
          r.heard.push(f);
          return true;
        },
        state: (s) => void r.states.push(s),
        time: (ms) => void r.times.push(ms),
      },
    }),
    {
      openLink: async (device) => {
        const link = await openIridiumSimLink(device.slice('sim://'.length), sim);
        r.links.push(link);
        return link;
      },
      timing: { ...TIMING, ...timing },
    },
  );
  return r;
}

async function until(what: string, cond: () => boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const quiet = (ms = 100) => new Promise((r) => setTimeout(r, ms));
const modem = (r: Rig) => r.links.at(-1)!.modem;
const gateway = (r: Rig) => iridiumSimGateway(r.channel);
const stats = (r: Rig) => r.bearer.stats() as Record<string, any>;
const bytes = (s: string) => new TextEncoder().encode(s);
let deliveries = 0;
const frame = (text: string, to = 'gateway', deliveryId = `dlv_${++deliveries}`): OutboundFrame => ({ deliveryId, messageId: 'm', to, channel: null, kind: 'text', text, payload: bytes(text) });

async function online(r: Rig): Promise<void> {
  await r.bearer.start(`sim://${r.channel}`);
  await until('online', () => r.bearer.phase === 'online');
}

function fails(result: SendResult, pattern: RegExp, retryable: boolean): void {
  assert.not.ok(result.ok, JSON.stringify(result));
  if (result.ok) return;
  assert.match(result.error, pattern);
  assert.is(result.retryable, retryable, result.error);
}

test('bring-up: echo off, no flow control, IMEI, firmware and model in stats; ring alerts on and the modem registered', async () => {
  const r = rig();
  try {
    await online(r);
    const s = stats(r);
    assert.match(s.imei, /^[0-9]{15}$/);
    assert.is(s.imei, modem(r).imei);
    assert.ok(s.firmware && s.model, JSON.stringify(s));
    assert.is(modem(r).settings.echo, false);
    assert.is(modem(r).settings.mta, 1);
    await until('registered', () => stats(r).registered === true);
    assert.equal(r.states.at(-1), { connected: true, lastError: null, phase: 'online' });
  } finally {
    await r.bearer.stop();
  }
});

test('a message to the gateway is written with its checksum, sent in one session and delivered with its MOMSN and cost', async () => {
  const r = rig();
  try {
    await online(r);
    const text = 'x'.repeat(60);
    const result = await r.bearer.send(frame(text));
    assert.ok(result.ok, JSON.stringify(result));
    const got = gateway(r).received.at(-1)!;
    assert.is(new TextDecoder().decode(got.payload), text);
    assert.equal(result.ok && result.meta, { momsn: got.momsn, mo_status: 0, credits: 2 });
    assert.is(modem(r).counters.checksumErrors, 0);
    assert.is(modem(r).mo, null, 'the MO buffer is cleared after the session (no resend by a mailbox check)');
    assert.equal([stats(r).credits_today, stats(r).credits_total, stats(r).sent], [2, 2, 1]);
  } finally {
    await r.bearer.stop();
  }
});

test('two failed sessions (retryable MO status) and a third that delivers: the message is written once, not billed for failures', async () => {
  const r = rig();
  try {
    await online(r);
    gateway(r).script(18, 32);
    const f = frame('twice unlucky');
    fails(await r.bearer.send(f), /ERR_IRIDIUM_SESSION: MO status 18 \(the RF connection was lost\)/, true);
    fails(await r.bearer.send(f), /MO status 32 \(no network service\)/, true);
    const third = await r.bearer.send(f);
    assert.ok(third.ok, JSON.stringify(third));
    assert.is(modem(r).counters.writes, 1, 'AT+SBDWB once');
    assert.equal([stats(r).mo_reused, stats(r).sessions, stats(r).sessions_failed, stats(r).credits_total], [2, 3, 2, 1]);
    assert.is(gateway(r).received.filter((m) => !m.duplicate).length, 1);
  } finally {
    await r.bearer.stop();
  }
});

test('a different delivery after a failed session rewrites the buffer; a reset modem (empty buffer) is rewritten too', async () => {
  const r = rig();
  try {
    await online(r);
    gateway(r).script(13);
    fails(await r.bearer.send(frame('first')), /MO status 13/, true);
    const second = await r.bearer.send(frame('second'));
    assert.ok(second.ok);
    assert.is(new TextDecoder().decode(gateway(r).received.at(-1)!.payload), 'second');
    gateway(r).script(13);
    const f = frame('third');
    fails(await r.bearer.send(f), /MO status 13/, true);
    modem(r).reset(); // the MO buffer is lost: AT+SBDSX says so
    await until('online again', () => r.bearer.phase === 'online');
    const again = await r.bearer.send(f);
    assert.ok(again.ok, JSON.stringify(again));
    assert.is(new TextDecoder().decode(gateway(r).received.at(-1)!.payload), 'third');
  } finally {
    await r.bearer.stop();
  }
});

test('sessions are paced: after a failure none starts before failure_backoff_s; the send waits without an attempt', async () => {
  const r = rig({ session_interval_s: 0, failure_backoff_s: 60 });
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    gateway(r).script(35);
    const before = Date.now();
    const failed = await r.bearer.send(frame('busy'));
    fails(failed, /MO status 35 \(the transceiver is busy\)/, true);
    assert.ok(!failed.ok && failed.retryAtMs! >= before + 60_000, 'the retry is named no sooner than the backoff');
    const sessions = modem(r).counters.sessions;
    const paced = await r.bearer.send(frame('busy'));
    assert.ok(!paced.ok && paced.notSent === true, JSON.stringify(paced));
    assert.match(!paced.ok ? paced.error : '', /sessions are paced/);
    assert.is(modem(r).counters.sessions, sessions, 'no session started');
    assert.ok(stats(r).next_session_at);
  } finally {
    await r.bearer.stop();
  }
});

test('payload limits: over 340 bytes fails for good naming split; an RB address leaves 331; empty and unknown destinations fail for good', async () => {
  const r = rig();
  try {
    await online(r);
    fails(await r.bearer.send(frame('y'.repeat(341))), /ERR_IRIDIUM_TOO_LONG: 341 bytes, but one SBD message carries at most 340 \(add a split transform with max_bytes 340/, false);
    fails(await r.bearer.send(frame('y'.repeat(332), 'RB0001234')), /at most 331/, false);
    fails(await r.bearer.send({ ...frame(''), payload: new Uint8Array(0) }), /ERR_IRIDIUM_EMPTY/, false);
    fails(await r.bearer.send(frame('hi', '+4915112345678')), /ERR_IRIDIUM_ADDRESS: "\+4915112345678" is no Iridium destination/, false);
    assert.is(modem(r).counters.writes, 0, 'nothing reached the modem');
    const max = await r.bearer.send(frame('z'.repeat(340)));
    assert.ok(max.ok && max.meta?.credits === 7, JSON.stringify(max));
  } finally {
    await r.bearer.stop();
  }
});

test('RockBLOCK to RockBLOCK: a message to RB<serial> reaches that modem, stored as text from the sender\'s RB address', async () => {
  const channel = `iridium-rb-${process.pid}-${++channels}`;
  const a = rig({}, {}, channel);
  const b = rig({}, {}, channel);
  try {
    await online(a);
    await online(b);
    await until('b registered (it gets ring alerts)', () => stats(b).registered === true);
    const result = await a.bearer.send(frame('hello b', `RB${modem(b).serial}`));
    assert.ok(result.ok, JSON.stringify(result));
    await until('b stored it', () => b.heard.length === 1);
    assert.equal([b.heard[0].from, b.heard[0].to, b.heard[0].kind, b.heard[0].text], [`RB${modem(a).serial}`, 'local', 'text', 'hello b']);
    assert.is(b.heard[0].meta.rockblock_sender, `RB${modem(a).serial}`);
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

test('MT: two queued messages arrive from one ring alert as two stored messages, the second through MT queued; binary stays data', async () => {
  const r = rig();
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    const g = gateway(r);
    // The first waits at the gateway unannounced; queueing the second rings once.
    g.mailbox(modem(r).imei).queue.push({ payload: Uint8Array.from([0x00, 0x0d, 0x0a, 0x4f, 0x4b, 0x0d, 0x0a, 0xff]), queuedAt: Date.now() }); // CR LF OK CR LF inside
    g.queueMt(modem(r).imei, 'second: grüße');
    await until('both stored', () => r.heard.length === 2);
    assert.equal(r.heard.map((f) => [f.from, f.kind]), [['gateway', 'data'], ['gateway', 'text']]);
    assert.equal(Array.from(r.heard[0].payload!), [0x00, 0x0d, 0x0a, 0x4f, 0x4b, 0x0d, 0x0a, 0xff]);
    assert.is(r.heard[1].text, 'second: grüße');
    assert.ok(r.heard[0].dedupeKey !== r.heard[1].dedupeKey);
    // Stored first, then cleared from the modem (a command of its own after the store).
    await until('the MT buffer cleared once stored', () => modem(r).mt === null);
    const s = stats(r);
    assert.equal([s.ring_alerts, s.mailbox_checks, s.received, s.credits_total, s.mt_queued], [1, 2, 2, 2, 0]);
  } finally {
    await r.bearer.stop();
  }
});

test('MT: a bad checksum is read again; one that stays bad is not stored and is counted', async () => {
  const r = rig();
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    modem(r).faults.corruptNextMtChecksum = true; // one bad read: the second read stores it
    gateway(r).queueMt(modem(r).imei, 'noisy line');
    await until('stored', () => r.heard.length === 1);
    assert.is(r.heard[0].text, 'noisy line');
    assert.is(stats(r).mt_bad_checksum, 1);
    // Every read bad: dropped, counted twice (read, read again), nothing stored.
    modem(r).on('mt-read', () => (modem(r).faults.corruptNextMtChecksum = true));
    modem(r).faults.corruptNextMtChecksum = true;
    gateway(r).queueMt(modem(r).imei, 'hopeless line');
    await until('counted', () => stats(r).mt_bad_checksum === 3);
    await quiet();
    assert.is(r.heard.length, 1, 'the bad copy was not stored');
  } finally {
    await r.bearer.stop();
  }
});

test('MT: when the database refuses a message it stays in the modem, no session overwrites it, and it is stored once the database is back', async () => {
  const r = rig();
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    r.store = false;
    gateway(r).queueMt(modem(r).imei, 'keep me');
    await until('the refusal', () => stats(r).store_failures === 1);
    assert.ok(modem(r).mt, 'still in the modem');
    const sessions = modem(r).counters.sessions;
    const waiting = await r.bearer.send(frame('not now'));
    assert.ok(!waiting.ok && waiting.notSent, JSON.stringify(waiting));
    assert.is(modem(r).counters.sessions, sessions, 'no session overwrote the MT buffer');
    r.store = true;
    const sent = await r.bearer.send(frame('now'));
    assert.ok(sent.ok, JSON.stringify(sent));
    assert.equal(r.heard.map((f) => f.text), ['keep me']);
  } finally {
    await r.bearer.stop();
  }
});

test('an MT message left in the modem by a crash is read at bring-up and stored', async () => {
  const channel = `iridium-crash-${process.pid}-${++channels}`;
  const first = rig({}, {}, channel);
  await online(first);
  await until('registered', () => stats(first).registered === true);
  first.store = false; // the bridge "crashes" after the modem got the message, before storing it
  gateway(first).queueMt(modem(first).imei, 'survivor');
  await until('the refusal', () => stats(first).store_failures === 1);
  await first.bearer.stop();
  const second = rig({}, {}, channel);
  try {
    await online(second);
    await until('stored', () => second.heard.length === 1);
    assert.is(second.heard[0].text, 'survivor');
    assert.is(modem(second).mt, null);
  } finally {
    await second.bearer.stop();
  }
});

test('signal: below min_signal a send waits for the sky (no session, no attempt, the reason in health); with signal it goes', async () => {
  const r = rig({ min_signal: 2 });
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    gateway(r).bars = 1;
    const sessions = modem(r).counters.sessions;
    const waiting = await r.bearer.send(frame('clouds'));
    assert.ok(!waiting.ok && waiting.notSent === true, JSON.stringify(waiting));
    assert.match(!waiting.ok ? waiting.error : '', /ERR_IRIDIUM_SIGNAL: 1 signal bars, 2 needed/);
    assert.is(modem(r).counters.sessions, sessions);
    assert.is(r.bearer.phase, 'waiting');
    assert.match(r.states.at(-1)!.lastError ?? '', /ERR_IRIDIUM_SIGNAL/);
    assert.match(stats(r).waiting, /ERR_IRIDIUM_SIGNAL/);
    gateway(r).bars = 4;
    const sent = await r.bearer.send(frame('clear sky'));
    assert.ok(sent.ok);
    assert.is(r.bearer.phase, 'online');
    assert.is(stats(r).waiting, null);
  } finally {
    await r.bearer.stop();
  }
});

test('faults: a modem that stops answering is reopened and the send fails retryably; garbage on the line does not break the next send', async () => {
  const r = rig();
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    modem(r).sendGarbage();
    const afterGarbage = await r.bearer.send(frame('after garbage'));
    assert.ok(afterGarbage.ok, JSON.stringify(afterGarbage));
    modem(r).faults.unresponsive = true;
    const lost = await r.bearer.send(frame('into the void'));
    fails(lost, /ERR_IRIDIUM_(WRITE|MODEM|SESSION)/, true);
    await until('reported', () => r.states.some((s) => !s.connected && /stopped answering|does not answer/.test(s.lastError ?? '')), 10_000);
    modem(r).faults.unresponsive = false;
    await until('online again', () => r.bearer.phase === 'online', 10_000);
    const back = await r.bearer.send(frame('back'));
    assert.ok(back.ok, JSON.stringify(back));
  } finally {
    await r.bearer.stop();
  }
});

test('faults: a reset in the middle of a session is a failed attempt that may have gone out; the modem comes back and the retry rewrites', async () => {
  const r = rig({}, { sessionMs: 300 }, undefined, undefined, { sessionTimeoutMs: 1500 });
  try {
    await online(r);
    await until('registered', () => stats(r).registered === true);
    const f = frame('mid-session');
    let reset = false;
    modem(r).on('command', (line: string) => {
      if (!reset && /SBDIX/.test(line)) {
        reset = true;
        setTimeout(() => modem(r).reset(), 50);
      }
    });
    const pending = r.bearer.send(f);
    // The reset modem never answers the session: it times out (1.5 s here) and is reopened.
    const result = await Promise.race([pending, quiet(10_000).then(() => null)]);
    assert.ok(result && !result.ok && result.retryable, JSON.stringify(result));
    assert.match(result && !result.ok ? result.error : '', /may have been sent/);
    await until('reopened', () => r.states.some((s) => !s.connected && /session did not end/.test(s.lastError ?? '')), 10_000);
    await until('online again', () => r.bearer.phase === 'online', 10_000);
    const retry = await r.bearer.send(f);
    assert.ok(retry.ok, JSON.stringify(retry));
    assert.is(gateway(r).received.filter((m) => new TextDecoder().decode(m.payload) === 'mid-session').length, 1, 'sent once');
  } finally {
    await r.bearer.stop();
  }
});

test('mailbox checks: without ring alerts a periodic empty session fetches waiting messages; checks stop at half the day budget', async () => {
  const r = rig({ ring_alerts: false, mailbox_check_s: 1, credits_per_day: 2 });
  try {
    await online(r);
    assert.is(modem(r).settings.mta, 0);
    gateway(r).queueMt(modem(r).imei, 'found by a check');
    await until('stored', () => r.heard.length === 1, 5000);
    assert.equal([stats(r).mailbox_checks, stats(r).credits_today, stats(r).ring_alerts], [1, 1, 0]);
    // Half of the 2-credit day is spent: no more checks, the rest is kept for sends.
    await quiet(2500);
    assert.is(stats(r).mailbox_checks, 1);
    assert.match(stats(r).waiting ?? '', /mailbox checks may use half/);
    const sent = await r.bearer.send(frame('a send still fits'));
    assert.ok(sent.ok, JSON.stringify(sent));
    assert.is(stats(r).credits_today, 2);
  } finally {
    await r.bearer.stop();
  }
});

// ---- the network's time (AT-MSSTM, iridium-sbd.md 3.8) ----
// The modem's clock is the network's: a FakeClock of its own, never compared with real time.

test('network time: read when the modem comes up and told to the bridge, exactly as the modem counts it', async () => {
  const network = new FakeClock(Date.parse('2026-11-28T12:00:02.000Z'));
  const r = rig({}, { clock: network });
  try {
    await online(r);
    await until('a time told', () => r.times.length > 0);
    // 56,310,345 s after ERA3's epoch: a whole number of 90 ms ticks, so no rounding.
    assert.is(r.times[0], Date.parse('2026-11-28T12:00:02.000Z'));
    assert.equal(stats(r).network_time, { time: '2026-11-28T12:00:02.000Z', era: 'ERA3', read_at: stats(r).network_time.read_at });
    assert.is(stats(r).network_time_reads, 1);
    assert.is(gateway(r).counters.sessions, 0, 'no session, no credit for the time');
    // After a send's session the modem has just heard the network: read again, 9 s later
    // (9 s is a whole number of ticks; 5 s would read 4.95 s, the tick before).
    network.advance(9000);
    const sent = await r.bearer.send(frame('hello'));
    assert.ok(sent.ok, JSON.stringify(sent));
    await until('a second time', () => r.times.length > 1);
    assert.is(r.times[1], Date.parse('2026-11-28T12:00:11.000Z'));
  } finally {
    await r.bearer.stop();
  }
});

test('network time: "no network service" tells nothing and says why; the health poll tells it once the sky is back', async () => {
  const network = new FakeClock(Date.parse('2026-11-28T12:00:02.000Z'));
  const channel = `iridium-driver-${process.pid}-time-${++channels}`;
  iridiumSimGateway(channel).bars = 0;
  const r = rig({}, { clock: network }, channel, memoryState(), { healthPollMs: 100 });
  try {
    await online(r);
    await until('the reason shown', () => stats(r).network_time_unavailable !== null);
    assert.match(stats(r).network_time_unavailable, /no network service/);
    await quiet(300);
    assert.equal(r.times, [], 'no signal: no time');
    assert.ok(r.logs.filter((l) => l.includes('iridium.no_network_time')).length === 1, 'logged once, not at every poll');
    gateway(r).bars = 4;
    await until('a time told', () => r.times.length > 0);
    assert.is(r.times[0], Date.parse('2026-11-28T12:00:02.000Z'));
    assert.is(stats(r).network_time_unavailable, null);
  } finally {
    await r.bearer.stop();
  }
});

test('network time: a count the driver cannot place in ERA3 is never told', async () => {
  // A modem whose clock is 2015-03-20 answers an ERA2 count (the simulator follows the era in
  // force at its time): 26,991,365 s after ERA2's epoch, which read as an ERA3 count would be
  // 2025-12-24T03:50:21.950Z, before ERA3 was broadcast. (A later ERA2 count would pass as ERA3:
  // a count does not name its era; iridium-sbd.md 3.8 says why that no longer happens.)
  const network = new FakeClock(Date.parse('2015-03-20T00:00:00.000Z'));
  const r = rig({}, { clock: network });
  try {
    await online(r);
    await until('the reason shown', () => stats(r).network_time_unavailable !== null);
    assert.match(stats(r).network_time_unavailable, /before ERA3 began/);
    assert.equal(r.times, []);
  } finally {
    await r.bearer.stop();
  }
});

test.run();
