import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerState, InboundFrame, OutboundFrame } from '../../../src/bearers/bearer.ts';
import { SmsBearer } from '../../../src/bearers/sms/driver.ts';
import { openSmsSimLink, smsSimNetwork, type SmsSimLink } from '../../../src/bearers/sms/simulator/link.ts';
import type { SmsModemOptions } from '../../../src/bearers/sms/simulator/modem.ts';
import { FakeClock, systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

// The SMS driver against the modem simulator over sim:// (an in-process byte stream; the
// simulator itself is checked by Gammu): bring-up with and without a PIN, sending long
// messages in parts, status reports, +CMS ERROR codes, receiving with deletion only after
// storing, and the day budget.

let keepAlive: ReturnType<typeof setInterval>;
test.before(() => void (keepAlive = setInterval(() => {}, 1000)));
test.after(() => clearInterval(keepAlive));

let networks = 0;
interface Modem {
  bearer: SmsBearer;
  states: BearerState[];
  heard: InboundFrame[];
  links: SmsSimLink[];
  logs: string[];
  /** What receive() answers (false: the database failed). */
  store: boolean;
  /** Times the driver told (BearerEvents.time). */
  times: number[];
}

function modem(network: string, settings: Record<string, unknown> = {}, sim: Omit<SmsModemOptions, 'network'> = {}): Modem {
  const m = { states: [], heard: [], links: [], logs: [], store: true, times: [] } as unknown as Modem;
  m.bearer = new SmsBearer(
    bearerContext({
      interfaceId: `ifc_${network}`, interfaceName: network, settings, clock: systemClock,
      log: createLogger({ level: 'debug', format: 'json', write: (l) => m.logs.push(l) }),
      events: {
        receive: (f) => {
          if (!m.store) return false;
          m.heard.push(f);
          return true;
        },
        state: (s) => void m.states.push(s),
        time: (ms) => void m.times.push(ms),
      },
    }),
    {
      openLink: async (device) => {
        const link = await openSmsSimLink(device.slice('sim://'.length), sim);
        m.links.push(link);
        return link;
      },
      // A modem plugged back in ignores commands until it is ready (RDY): short AT timeouts.
      timing: { backoffInitialMs: 30, backoffMaxMs: 200, sendTimeoutMs: 5000, commandTimeoutMs: 1000 },
    },
  );
  return m;
}

async function until(what: string, cond: () => boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const online = (m: Modem) => until('online', () => m.bearer.phase === 'online');
const sim = (m: Modem) => m.links.at(-1)!.modem;
const text = (to: string, t: string): OutboundFrame => ({ deliveryId: 'd', messageId: 'm', to, channel: null, kind: 'text', text: t, payload: new TextEncoder().encode(t) });
const newNetwork = () => `sms-driver-${process.pid}-${++networks}`;

test('a GSM-7 text and a 3-part UCS-2 text with emoji arrive as one message each, identical; the SIM is emptied after storing', async () => {
  const n = newNetwork();
  const a = modem(n);
  const b = modem(n);
  try {
    await a.bearer.start(`sim://${n}`);
    await b.bearer.start(`sim://${n}`);
    await online(a);
    await online(b);
    const gsm = 'Ridge camp: all well {moving at dawn} €5';
    const r1 = await a.bearer.send(text(sim(b).number, gsm));
    assert.ok(r1.ok, JSON.stringify(r1));
    assert.equal(r1.ok && r1.meta?.parts, 1);
    const long = 'Привет из лагеря 🏔️ '.repeat(8);
    const r2 = await a.bearer.send(text(sim(b).number, long));
    assert.ok(r2.ok && r2.meta?.parts === 3 && r2.meta?.encoding === 'ucs2', JSON.stringify(r2));
    await until('both messages', () => b.heard.length === 2);
    assert.equal(b.heard.map((f) => f.text), [gsm, long]);
    assert.equal(b.heard.map((f) => f.from), [sim(a).number, sim(a).number]);
    await until('the SIM emptied', () => sim(b).storage.used === 0);
    assert.is(b.bearer.stats().deleted, 4);
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

test('with delivery reports a delivery is delivered only after every part\'s report; a failed report fails it', async () => {
  const n = newNetwork();
  const a = modem(n, { delivery_reports: true, report_timeout_s: 10 });
  const b = modem(n);
  try {
    await a.bearer.start(`sim://${n}`);
    await b.bearer.start(`sim://${n}`);
    await online(a);
    await online(b);
    const ok = await a.bearer.send(text(sim(b).number, 'x'.repeat(200)));
    assert.ok(ok.ok && /confirmed/.test(String(ok.meta?.delivered)), JSON.stringify(ok));
    assert.is(a.bearer.stats().reports, 2);
    smsSimNetwork(n).setUnreachable(sim(b).number, 'permanent');
    const failed = await a.bearer.send(text(sim(b).number, 'are you there?'));
    assert.ok(!failed.ok && !failed.retryable && failed.error.startsWith('ERR_SMS_REPORT_'), JSON.stringify(failed));
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

test('+CMS ERROR: a retryable code retries, a permanent one fails for good, each named; bad numbers and long messages fail at once', async () => {
  const n = newNetwork();
  const a = modem(n, { max_parts: 2 });
  try {
    await a.bearer.start(`sim://${n}`);
    await online(a);
    sim(a).failNextSends(331, 1);
    assert.equal(await a.bearer.send(text('+15550001234', 'x')), { ok: false, retryable: true, error: 'ERR_SMS_NO_NETWORK_SERVICE: the modem answered +CMS ERROR: 331' });
    sim(a).failNextSends(1, 1);
    assert.equal(await a.bearer.send(text('+15550001234', 'x')), { ok: false, retryable: false, error: 'ERR_SMS_UNASSIGNED_NUMBER: the modem answered +CMS ERROR: 1' });
    assert.ok((await a.bearer.send(text('+15550001234', 'x'))).ok, 'the fault is over');
    const bad = await a.bearer.send(text('call me', 'x'));
    assert.ok(!bad.ok && !bad.retryable && bad.error.startsWith('ERR_SMS_NUMBER'), JSON.stringify(bad));
    const long = await a.bearer.send(text('+15550001234', 'y'.repeat(307)));
    assert.ok(!long.ok && !long.retryable && long.error.startsWith('ERR_SMS_TOO_LONG'), JSON.stringify(long));
  } finally {
    await a.bearer.stop();
  }
});

test('an SMS the database cannot store stays on the SIM and is stored at the next listing; one that arrived while away is found at start', async () => {
  const n = newNetwork();
  const a = modem(n, { poll_s: 5 });
  try {
    // Messages waiting for a modem that is not on yet are delivered when it attaches.
    await a.bearer.start(`sim://${n}`);
    await online(a);
    const number = sim(a).number;
    a.store = false;
    smsSimNetwork(n).inject('+4915112345678', number, 'keep me');
    await until('the failed store', () => a.bearer.stats().store_failures === 1);
    assert.is(sim(a).storage.used, 1, 'still on the SIM');
    a.store = true;
    await a.bearer.stop();
    smsSimNetwork(n).inject('+4915112345678', number, 'while you were away');
    await a.bearer.start(`sim://${n}`);
    await online(a);
    await until('both stored', () => a.heard.length === 2);
    assert.equal(a.heard.map((f) => f.text).sort(), ['keep me', 'while you were away']);
    await until('the SIM emptied', () => sim(a).storage.used === 0);
  } finally {
    await a.bearer.stop();
  }
});

test('SIM PIN: sent when asked; a wrong PIN is reported and never sent a second time', async () => {
  const right = newNetwork();
  const ok = modem(right, { pin: '4711' }, { pin: '4711' });
  try {
    await ok.bearer.start(`sim://${right}`);
    await online(ok);
  } finally {
    await ok.bearer.stop();
  }
  const n = newNetwork();
  const wrong = modem(n, { pin: '0000' }, { pin: '4711' });
  try {
    await wrong.bearer.start(`sim://${n}`);
    await until('the refusal', () => wrong.states.some((s) => /refused the PIN/.test(s.lastError ?? '')));
    await until('a few retries', () => wrong.states.filter((s) => s.phase === 'backoff').length >= 3, 20_000);
    const pins = sim(wrong).hostLog.map((l) => l.line).filter((l) => /AT\+CPIN=/i.test(l));
    assert.is(pins.length, 1, `exactly one PIN was sent: ${pins.join(' | ')}`);
    assert.not.ok(wrong.logs.some((l) => l.includes('0000') || l.includes('4711')), 'no PIN in the log');
  } finally {
    await wrong.bearer.stop();
  }
});

test('the day budget: a message that does not fit waits (not an attempt), and the interface says why', async () => {
  const n = newNetwork();
  const a = modem(n, { parts_per_day: 2 });
  try {
    await a.bearer.start(`sim://${n}`);
    await online(a);
    assert.ok((await a.bearer.send(text('+15550001234', 'one'))).ok);
    const r = await a.bearer.send(text('+15550001234', 'z'.repeat(200)));
    assert.ok(!r.ok && r.notSent === true && r.retryable && typeof r.retryAtMs === 'number', JSON.stringify(r));
    assert.match(r.ok ? '' : r.error, /daily budget of 2 parts is spent \(1 left, 2 needed\)/);
    assert.is(a.bearer.phase, 'budget');
    assert.is(a.states.at(-1)!.connected, false, 'the dispatcher stops sending');
    assert.is(a.bearer.stats().parts_left_today, 1);
  } finally {
    await a.bearer.stop();
  }
});

test('a long message cut short by a failing part: the retry sends only the rest under the same reference, and one message arrives', async () => {
  const n = newNetwork();
  const a = modem(n);
  const b = modem(n);
  try {
    await a.bearer.start(`sim://${n}`);
    await b.bearer.start(`sim://${n}`);
    await online(a);
    await online(b);
    const long = 'Bridge to ridge camp: storm at 18:00, stay in the hut. '.repeat(7); // 3 GSM-7 parts
    const frame = { ...text(sim(b).number, long), deliveryId: 'dlv_long' };
    // The second part meets a network out of order (+CMS ERROR: 38, retryable).
    sim(a).once('sent', () => (sim(a).faults.failSends = { code: 38, remaining: 1 }));
    let sentParts = 0;
    sim(a).on('sent', () => sentParts++);
    const first = await a.bearer.send(frame);
    assert.ok(!first.ok && first.retryable, JSON.stringify(first));
    assert.match(!first.ok ? first.error : '', /after 1 of 3 parts went out \(a retry sends only the rest\)/);
    const retry = await a.bearer.send(frame);
    assert.ok(retry.ok, JSON.stringify(retry));
    assert.equal([retry.ok && retry.meta?.parts, retry.ok && retry.meta?.resumed_after_part, (retry.ok && (retry.meta?.message_references as number[]))?.length], [3, 1, 3]);
    assert.is(sentParts, 3, 'three parts in all, none twice');
    await until('the message', () => b.heard.length === 1);
    assert.is(b.heard[0].text, long);
    assert.not.ok(b.heard[0].meta.incomplete);
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

// ---- the network's time: the centre's timestamp (TP-SCTS, docs/protocols/sms.md 4.8) ----

/** An SMS-DELIVER written byte by byte from 23.040 9.2.2.1: first octet 04 (DELIVER, no more
 *  messages), OA of 11 digits, international (0B 91, +15551234567 as swapped semi-octets),
 *  PID 00, DCS 00 (GSM-7), the seven SCTS octets given, UDL 02 and "hi" packed (E8 34). */
const deliverWithScts = (scts: string): Uint8Array => Uint8Array.from(Buffer.from(`04 0B 91 51 55 21 43 65 F7 00 00 ${scts} 02 E8 34`.replace(/ /g, ''), 'hex'));

const handTo = (m: Modem, tpdu: Uint8Array) =>
  sim(m).receive({ kind: 'deliver', tpdu, smsc: '+15550000000', from: '+15551234567', to: sim(m).number, text: 'hi', concat: null });

test('centre time: a received SMS tells the centre\'s timestamp in UTC, its zone applied; an older one is not told', async () => {
  const n = newNetwork();
  const m = modem(n);
  try {
    await m.bearer.start(`sim://${n}`);
    await online(m);
    // 2026-11-28 07:00:02 at -05:00 (TZ octet 0A: 20 quarters, sign bit 3 set) = 12:00:02Z.
    handTo(m, deliverWithScts('62 11 82 70 00 20 0A'));
    await until('one stored', () => m.heard.length === 1);
    assert.equal(m.times, [Date.parse('2026-11-28T12:00:02.000Z')]);
    // 17:00:00 at +05:45 (TZ 32: 23 quarters) = 11:15:00Z: older than the last, not told.
    handTo(m, deliverWithScts('62 11 82 71 00 00 32'));
    await until('two stored', () => m.heard.length === 2);
    assert.is(m.times.length, 1, 'an SMS that waited tells nothing new');
    // 14:00:00 at +01:00 (TZ 40: 4 quarters) = 13:00:00Z: newer, told.
    handTo(m, deliverWithScts('62 11 82 41 00 00 40'));
    await until('three stored', () => m.heard.length === 3);
    assert.equal(m.times, [Date.parse('2026-11-28T12:00:02.000Z'), Date.parse('2026-11-28T13:00:00.000Z')]);
    const s = m.bearer.stats() as Record<string, any>;
    assert.is(s.centre_time.time, '2026-11-28T13:00:00.000Z');
    assert.is(s.centre_time.local, '2026-11-28T14:00:00+01:00');
  } finally {
    await m.bearer.stop();
  }
});

test('centre time: a malformed timestamp (month 13) tells nothing; the message is still stored', async () => {
  const n = newNetwork();
  const m = modem(n);
  try {
    await m.bearer.start(`sim://${n}`);
    await online(m);
    handTo(m, deliverWithScts('62 31 82 70 00 20 0A'));
    await until('stored', () => m.heard.length === 1);
    assert.equal(m.times, []);
  } finally {
    await m.bearer.stop();
  }
});

test('centre time: the simulated network stamps what it delivers with its own clock and zone', async () => {
  const n = newNetwork();
  const networkClock = new FakeClock(Date.parse('2026-11-28T12:00:02.000Z'));
  const network = smsSimNetwork(n, { clock: networkClock, tzQuarters: -20 });
  const m = modem(n);
  try {
    await m.bearer.start(`sim://${n}`);
    await online(m);
    network.inject('+15557654321', sim(m).number, 'time check');
    // The network's timers run on its fake clock: move it on (0 ms) until the SMS is stored.
    await until('stored', () => {
      networkClock.advance(0);
      return m.heard.length === 1;
    });
    assert.equal(m.times, [Date.parse('2026-11-28T12:00:02.000Z')]);
    assert.is((m.bearer.stats() as Record<string, any>).centre_time.local, '2026-11-28T07:00:02-05:00');
  } finally {
    await m.bearer.stop();
  }
});

test.run();
