import type { Bearer, BearerContext, BearerReason, OutboundFrame, SendResult } from '../bearer.ts';
import type { TimerHandle } from '../../lib/clock.ts';
import { equalBytes } from '../shared/codec/bytes.ts';
import { DeviceError } from '../device-error.ts';
import { AtSession, describeAtResult, type AtResult } from '../shared/at/command-queue.ts';
import { parseInfo } from '../shared/codec/at.ts';
import { clearTimers, type DriverLifecycle } from '../shared/links/driver-lifecycle.ts';
import { SupervisedDriver } from '../shared/links/supervised-driver.ts';
import type { Link } from '../shared/links/link.ts';
import { CreditLedger, type CreditCheck } from './credits.ts';
import { readIdentity, type ModemIdentity } from './identity.ts';
import { mtFrame } from './inbound.ts';
import {
  MT_STATUS, SBD_MAX_MO_BYTES, SBDWB_STATUS, holdsForMinutes, moStatus, msstmTime, parseMsstm, parseSbdix, parseSignal, rockblockPrefix, sbdWriteData,
  sessionCredits,
  type SbdixResult,
} from './sbd.ts';
import { moPayload } from './outbound.ts';
import { IridiumSettings } from './settings.ts';
import { DEFAULT_IRIDIUM_TIMING, type IridiumDriverOptions, type IridiumTiming } from './timing.ts';

export { DEFAULT_IRIDIUM_TIMING, type IridiumDriverOptions, type IridiumTiming } from './timing.ts';

// The Iridium SBD bearer (interface kind `iridium`; docs/iridium.md, wire facts
// docs/protocols/iridium-sbd.md section 3). The device supervisor keeps the serial link; on
// every fresh link this driver brings the modem up (echo off, no flow control, identity, ring
// alerts) and reads an MT message a crash left in the modem. Every satellite session, whether
// it sends a delivery or only checks the mailbox, runs one at a time (`#exclusive`), paced,
// within the credit budget and only with enough signal; each session's MT status is acted on.
//
// A send that cannot start (budget spent, no signal, pacing) is `notSent`: the delivery waits
// without spending an attempt. A failed session does not rewrite the MO buffer: the next try
// reuses it (iridium-sbd.md 3.2), after AT+SBDSX confirms the modem still holds it.
//
// The Iridium network's time (AT-MSSTM, iridium-sbd.md 3.8) is read when the modem comes up,
// at each health poll and after each session that went through, and told to the bridge
// (BearerEvents.time), which takes it only when the operator allows (docs/clock.md). It is a
// local query: no session, no credit.

export type IridiumPhase = 'closed' | 'opening' | 'initialising' | 'online' | 'waiting' | 'backoff';

type Wait = { reason: string; untilMs: number; phase: boolean; cause?: BearerReason };
type Session = { ok: true; result: SbdixResult } | { ok: false; error: string; ambiguous: boolean };
type FetchReason = 'ring' | 'queued' | 'periodic';

export class IridiumBearer extends SupervisedDriver<IridiumPhase, IridiumSettings, IridiumTiming, IridiumDriverOptions> implements Bearer {
  readonly kind = 'iridium';
  readonly mtu = SBD_MAX_MO_BYTES;
  readonly concurrency = 1;
  readonly maxSendMs: number;
  readonly #credits: CreditLedger;
  readonly #sessionTimeoutMs: number;
  protected readonly lifecycle: DriverLifecycle<IridiumPhase>;
  #at: AtSession | null = null;
  #identity: ModemIdentity = { imei: null, firmware: null, model: null };
  #signal: number | null = null;
  #lock: Promise<unknown> = Promise.resolve();
  /** What the modem's MO buffer holds, as far as this driver wrote it. */
  #mo: { deliveryId: string; payload: Uint8Array } | null = null;
  #nextSessionAt = 0;
  #waiting: string | null = null;
  #ringPending = false;
  #registered = false;
  #mtQueued = 0;
  /** An MT message the database refused: it stays in the modem's MT buffer, and no session
   *  (which would overwrite that buffer) starts until it is stored. */
  #mtUnstored: number | null = null;
  #lastSession: { at: string; mo_status: number; meaning: string; momsn: number | null } | null = null;
  /** The last network time read (its UTC time and era), and when (our clock). */
  #networkTime: { time: string; era: string; read_at: string } | null = null;
  /** Why the last AT-MSSTM gave no time; shown once in the log per distinct reason. */
  #noNetworkTime: string | null = null;
  #timers: { fetch?: TimerHandle; periodic?: TimerHandle; health?: TimerHandle } = {};
  readonly #counters = {
    sessions: 0, sessions_failed: 0, sent: 0, failed: 0, mo_reused: 0, received: 0, mailbox_checks: 0, ring_alerts: 0,
    mt_bad_checksum: 0, mt_read_failures: 0, store_failures: 0, network_time_reads: 0,
  };

  constructor(ctx: BearerContext, options: IridiumDriverOptions) {
    super(ctx, options, { timing: DEFAULT_IRIDIUM_TIMING, settings: IridiumSettings });
    this.#credits = new CreditLedger(ctx.clock, ctx.state, { perDay: this.settings.credits_per_day, perMonth: this.settings.credits_per_month });
    this.#sessionTimeoutMs = this.timing.sessionTimeoutMs ?? this.settings.session_timeout_s * 1000;
    // Clear, write, signal, session and the MT read, one after the other.
    this.maxSendMs = this.#sessionTimeoutMs + this.timing.writeTimeoutMs + 6 * this.timing.commandTimeoutMs;
    this.lifecycle = this.supervise({
      session: (link) => this.#bringUp(link),
      opening: 'opening the modem',
      online: { why: 'modem initialised' },
      wentOnline: () => this.#wentOnline(),
      stopping: () => this.#goOffline('the interface stopped'),
    });
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const built = moPayload(frame);
    if (!built.ok) return this.#failed({ ok: false, retryable: false, error: built.error });
    const cost = sessionCredits(built.payload.length);
    if (!this.#credits.everFits(cost)) {
      return this.#failed({ ok: false, retryable: false, reason: 'budget', error: `ERR_IRIDIUM_BUDGET: a ${built.payload.length}-byte message costs ${cost} credits, more than the budget allows in a day or a month (shorten it or raise credits_per_day / credits_per_month)` });
    }
    return this.#exclusive(() => this.#sendNow(frame, built.payload, cost));
  }

  stats(): Record<string, unknown> {
    return {
      phase: this.lifecycle.phase,
      device: this.lifecycle.device,
      imei: this.#identity.imei,
      firmware: this.#identity.firmware,
      model: this.#identity.model,
      signal_bars: this.#signal,
      waiting: this.#waiting,
      next_session_at: this.#nextSessionAt > this.ctx.clock.now() ? new Date(this.#nextSessionAt).toISOString() : null,
      last_session: this.#lastSession,
      network_time: this.#networkTime,
      network_time_unavailable: this.#noNetworkTime,
      mt_queued: this.#mtQueued,
      registered: this.#registered,
      ...this.#credits.view(),
      ...this.#counters,
    };
  }

  // ---- sending ----------------------------------------------------------------------------

  async #sendNow(frame: OutboundFrame, payload: Uint8Array, cost: number): Promise<SendResult> {
    const at = this.#at;
    if (!at || (this.lifecycle.phase !== 'online' && this.lifecycle.phase !== 'waiting')) {
      return { ok: false, retryable: true, error: `ERR_IRIDIUM_OFFLINE: the modem is not online (${this.lifecycle.phase}${this.lifecycle.state.lastError ? `: ${this.lifecycle.state.lastError}` : ''})` };
    }
    const wait = (await this.#mayStartSession(at, cost, 1)) ?? (await this.#signalWait(at));
    if (wait) return this.#notSent(wait);
    const loaded = await this.#loadMo(at, frame.deliveryId, payload);
    if (loaded !== null) return this.#failed({ ok: false, retryable: true, error: loaded });
    const session = await this.#runSession(at);
    if (!session.ok) {
      // A session that never answered may have gone out and been billed: the budget counts it,
      // so the real bill never passes the budget (docs/iridium.md).
      if (session.ambiguous) this.#credits.spend(cost);
      return this.#failed({ ok: false, retryable: true, retryAtMs: this.#nextSessionAt, error: session.error });
    }
    const mo = moStatus(session.result.moStatus);
    this.#credits.spend(cost);
    this.#counters.sent++;
    // The MO buffer keeps its message after a session: cleared, or the next mailbox check
    // sends (and bills) it again (iridium-sbd.md 3.7).
    this.#mo = null;
    await at.run('AT+SBDD0');
    await this.#afterSession(at, session.result);
    return { ok: true, meta: { momsn: session.result.momsn, mo_status: mo.code, credits: cost, ...(mo.code !== 0 ? { note: mo.meaning } : {}) } };
  }

  /** AT+SBDD0 then AT+SBDWB; or nothing when the MO buffer still holds this delivery's bytes
   *  from a failed session. Null when loaded, else the error. */
  async #loadMo(at: AtSession, deliveryId: string, payload: Uint8Array): Promise<string | null> {
    const mo = this.#mo;
    if (mo && mo.deliveryId === deliveryId && equalBytes(mo.payload, payload) && (await this.#modemHoldsMo(at))) {
      this.#counters.mo_reused++;
      return null;
    }
    this.#mo = null;
    const clear = await at.run('AT+SBDD0');
    if (!clear.ok) return `ERR_IRIDIUM_MODEM: the modem did not clear its MO buffer (AT+SBDD0: ${describeAtResult(clear)})`;
    const r = await at.run(`AT+SBDWB=${payload.length}`, { promptData: sbdWriteData(payload), endOn: (line) => line === '1', timeoutMs: this.timing.writeTimeoutMs });
    const status = r.info.at(-1) ?? null;
    if (!r.ok || status !== '0') {
      const why = status !== null && status in SBDWB_STATUS ? `status ${status}: ${SBDWB_STATUS[status]}` : describeAtResult(r);
      return `ERR_IRIDIUM_WRITE: the modem did not take the message (AT+SBDWB ${why})`;
    }
    this.#mo = { deliveryId, payload: payload.slice() };
    return null;
  }

  /** AT+SBDSX's first field: whether the MO buffer holds a message (a reset empties it). */
  async #modemHoldsMo(at: AtSession): Promise<boolean> {
    const r = await at.run('AT+SBDSX');
    const args = parseInfo(r.info.find((l) => l.startsWith('+SBDSX')) ?? '').args;
    return r.ok && args[0] === 1;
  }

  // ---- sessions ---------------------------------------------------------------------------

  /** Why no session may start now (pacing, budget, an unstored MT message), or null. */
  async #mayStartSession(at: AtSession, cost: number, share: number): Promise<Wait | null> {
    if (this.#mtUnstored !== null) {
      await this.#readMt(at, this.#mtUnstored);
      if (this.#mtUnstored !== null) return { reason: 'a received message could not be stored yet; no session may overwrite it', untilMs: this.ctx.clock.now() + 10_000, phase: true, cause: 'unstored' };
    }
    const now = this.ctx.clock.now();
    if (now < this.#nextSessionAt) return { reason: `sessions are paced: the next may start at ${new Date(this.#nextSessionAt).toISOString()}`, untilMs: this.#nextSessionAt, phase: false };
    const budget: CreditCheck = this.#credits.allows(cost, share);
    if (!budget.ok) return { reason: `ERR_IRIDIUM_BUDGET: ${budget.reason}; waiting until ${new Date(budget.untilMs).toISOString()}`, untilMs: budget.untilMs, phase: true, cause: 'budget' };
    return null;
  }

  /** AT+CSQF (the last reading, at once: iridium-sbd.md 3.5): below min_signal nothing is paid
   *  for a session that would fail; the message waits for the sky. */
  async #signalWait(at: AtSession): Promise<Wait | null> {
    const r = await at.run('AT+CSQF');
    const bars = parseSignal(r.info.find((l) => l.startsWith('+CSQ')) ?? '');
    this.#signal = bars.ok ? bars.value : null;
    if (!bars.ok || bars.value >= this.settings.min_signal) return null;
    const retry = Math.max(this.settings.session_interval_s * 1000, 5_000);
    return { reason: `ERR_IRIDIUM_SIGNAL: ${bars.value} signal bars, ${this.settings.min_signal} needed; waiting for the sky`, untilMs: this.ctx.clock.now() + retry, phase: true, cause: 'signal' };
  }

  /** AT+SBDIX (AT+SBDIXA when answering a ring alert), paced after it ends. */
  async #runSession(at: AtSession): Promise<Session> {
    const command = this.#ringPending ? 'AT+SBDIXA' : 'AT+SBDIX';
    this.#counters.sessions++;
    const r = await at.run(command, { timeoutMs: this.#sessionTimeoutMs });
    const now = this.ctx.clock.now();
    this.#nextSessionAt = now + this.settings.session_interval_s * 1000;
    const parsed = r.ok ? parseSbdix(r.info.find((l) => l.startsWith('+SBDIX')) ?? '') : null;
    if (!parsed || !parsed.ok) {
      this.#sessionFailed(now, null);
      const error = parsed ? `ERR_IRIDIUM_SESSION: unreadable session result (${parsed.error})` : `ERR_IRIDIUM_SESSION: ${command} ${describeAtResult(r)} (it may have been sent)`;
      if (r.error === 'TIMEOUT') this.lifecycle.fail(`the session did not end within ${this.#sessionTimeoutMs / 1000} s; reopening the modem`);
      return { ok: false, error, ambiguous: true };
    }
    const mo = moStatus(parsed.value.moStatus);
    this.#lastSession = { at: new Date(now).toISOString(), mo_status: mo.code, meaning: mo.meaning, momsn: mo.outcome === 'sent' ? parsed.value.momsn : null };
    if (mo.outcome === 'failed') {
      this.#sessionFailed(now, mo.code);
      return { ok: false, error: `ERR_IRIDIUM_SESSION: MO status ${mo.code} (${mo.meaning})`, ambiguous: false };
    }
    this.#waiting = null;
    this.#registered = true;
    if (this.lifecycle.phase === 'waiting') this.lifecycle.enter('online', 'a session went through', { connected: true, lastError: null });
    return { ok: true, result: parsed.value };
  }

  #sessionFailed(now: number, code: number | null): void {
    this.#counters.sessions_failed++;
    const hold = Math.max(this.settings.failure_backoff_s * 1000, code !== null && holdsForMinutes(code) ? this.timing.noServiceHoldMs : 0);
    this.#nextSessionAt = Math.max(this.#nextSessionAt, now + hold);
  }

  /** Every session's MT status is acted on: a message is read (the next session overwrites
   *  it), and while the gateway holds more, another session fetches them. */
  async #afterSession(at: AtSession, s: SbdixResult): Promise<void> {
    this.#ringPending = false;
    this.#mtQueued = s.mtQueued;
    // The modem has just heard the network: its time is as fresh as it gets.
    await this.#readNetworkTime(at);
    if (s.mtStatus === MT_STATUS.received && s.mtLength > 0) await this.#readMt(at, s.mtmsn);
    if (s.mtQueued > 0) this.#scheduleFetch('queued');
  }

  /** AT+SBDRB, checksum checked, stored, then AT+SBDD1. A bad checksum is read once more (the
   *  buffer is still in the modem) and, still bad, counted and dropped. */
  async #readMt(at: AtSession, mtmsn: number | null): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await at.run('AT+SBDRB', { binary: true, timeoutMs: 10_000 });
      if (!r.ok || !r.binary) {
        this.#counters.mt_read_failures++;
        continue;
      }
      if (!r.binary.checksumOk) {
        this.#counters.mt_bad_checksum++;
        this.ctx.log.warn('iridium.mt_bad_checksum', { mtmsn, bytes: r.binary.payload.length });
        continue;
      }
      if (r.binary.payload.length === 0) {
        this.#mtUnstored = null;
        return;
      }
      // The MT buffer is cleared only once the message is on disk (BearerEvents.receive).
      const stored = await this.ctx.events.receive(mtFrame(r.binary.payload, { imei: this.#identity.imei, mtmsn }));
      if (stored === false) {
        this.#counters.store_failures++;
        this.#mtUnstored = mtmsn ?? 0;
        return;
      }
      this.#counters.received++;
      this.#mtUnstored = null;
      await at.run('AT+SBDD1');
      return;
    }
    this.#mtUnstored = null;
  }

  // ---- mailbox checks and ring alerts -----------------------------------------------------

  #scheduleFetch(reason: FetchReason, atMs = this.#nextSessionAt): void {
    // Not after stop() or while the link is down: bring-up schedules what is still pending.
    if (this.#timers.fetch || !this.#at || !this.lifecycle.running) return;
    this.#timers.fetch = this.ctx.clock.setTimeout(() => {
      this.#timers.fetch = undefined;
      void this.#exclusive(() => this.#fetch(reason));
    }, Math.max(0, atMs - this.ctx.clock.now()));
  }

  /** A session with an empty MO buffer (1 credit): for a ring alert, for messages the gateway
   *  said it holds, or the periodic mailbox check, which may spend only half of each budget. */
  async #fetch(reason: FetchReason): Promise<void> {
    const at = this.#at;
    if (!at || (this.lifecycle.phase !== 'online' && this.lifecycle.phase !== 'waiting')) return;
    if (reason !== 'periodic' && !this.#ringPending && this.#mtQueued === 0) return; // a send's session took them
    const wait = (await this.#mayStartSession(at, 1, reason === 'periodic' ? 0.5 : 1)) ?? (await this.#signalWait(at));
    if (wait) {
      if (reason !== 'periodic') this.#scheduleFetch(reason, wait.untilMs);
      // A periodic check held back by the budget is no reason to show the modem as waiting:
      // sends may still fit (mailbox checks stop first). It is shown in stats only.
      if (wait.phase && reason !== 'periodic') this.#waitFor(wait);
      else if (wait.phase) this.#waiting = wait.reason;
      return;
    }
    // An empty MO: a message left from a failed send would be sent (and billed) again (3.7).
    this.#mo = null;
    if (!(await at.run('AT+SBDD0')).ok) {
      if (reason !== 'periodic') this.#scheduleFetch(reason); // the waiting message is not forgotten
      return;
    }
    const session = await this.#runSession(at);
    if (!session.ok) {
      if (reason !== 'periodic') this.#scheduleFetch(reason);
      return;
    }
    this.#credits.spend(1);
    this.#counters.mailbox_checks++;
    await this.#afterSession(at, session.result);
  }

  #armPeriodic(): void {
    if (this.settings.mailbox_check_s === 0) return;
    if (this.#timers.periodic) this.ctx.clock.clearTimeout(this.#timers.periodic);
    this.#timers.periodic = this.ctx.clock.setTimeout(() => {
      this.#timers.periodic = undefined;
      void this.#exclusive(() => this.#fetch('periodic')).finally(() => {
        if (this.#at) this.#armPeriodic();
      });
    }, this.settings.mailbox_check_s * 1000);
  }

  /** The gateway rings only a registered modem (iridium-sbd.md 3.5); any session registers
   *  it, AT+SBDREG does so without sending or billing a message. Paced like a session. */
  async #register(): Promise<void> {
    const at = this.#at;
    if (!at || this.#mtUnstored !== null) return;
    const wait = this.ctx.clock.now() < this.#nextSessionAt;
    if (wait) return;
    const r = await at.run('AT+SBDREG', { timeoutMs: this.#sessionTimeoutMs });
    this.#nextSessionAt = this.ctx.clock.now() + this.settings.session_interval_s * 1000;
    const [status, error] = parseInfo(r.info.find((l) => l.startsWith('+SBDREG')) ?? '').args;
    this.#registered = r.ok && status === 2;
    if (!this.#registered) this.ctx.log.info('iridium.not_registered', { status: status ?? null, error: error ?? null, note: 'ring alerts start with the first session that goes through' });
  }

  #armHealth(): void {
    if (this.#timers.health) this.ctx.clock.clearTimeout(this.#timers.health);
    this.#timers.health = this.ctx.clock.setTimeout(() => {
      this.#timers.health = undefined;
      const at = this.#at;
      if (!at) return;
      void this.#exclusive(async () => {
        const r = await at.run('AT+CSQF');
        const bars = parseSignal(r.info.find((l) => l.startsWith('+CSQ')) ?? '');
        if (bars.ok) this.#signal = bars.value;
        await this.#readNetworkTime(at);
      }).finally(() => {
        if (this.#at === at) this.#armHealth();
      });
    }, this.timing.healthPollMs);
  }

  /** AT-MSSTM: the network's time, told to the bridge. "no network service" (the modem has
   *  not registered since power-up) and a count this driver cannot place are shown in stats
   *  and tried again at the next health poll; neither is an error of the modem. */
  async #readNetworkTime(at: AtSession): Promise<void> {
    const r = await at.run('AT-MSSTM');
    if (!r.ok) return;
    const line = r.info.find((l) => l.trim().toUpperCase().startsWith('-MSSTM'));
    const parsed = parseMsstm(line ?? '');
    const decoded = parsed.ok && parsed.value !== null ? msstmTime(parsed.value) : null;
    if (decoded?.ok) {
      this.#counters.network_time_reads++;
      this.#noNetworkTime = null;
      this.#networkTime = { time: new Date(decoded.value.ms).toISOString(), era: decoded.value.era, read_at: new Date(this.ctx.clock.now()).toISOString() };
      this.ctx.events.time?.(decoded.value.ms);
      return;
    }
    const why = !parsed.ok ? parsed.error : parsed.value === null ? 'no network service: the modem has no time from the network yet' : (decoded as { ok: false; error: string }).error;
    if (why !== this.#noNetworkTime) this.ctx.log.info('iridium.no_network_time', { reason: why });
    this.#noNetworkTime = why;
  }

  #onRing(): void {
    this.#counters.ring_alerts++;
    this.#ringPending = true;
    this.#scheduleFetch('ring');
  }

  // ---- bring-up ---------------------------------------------------------------------------

  async #bringUp(link: Link): Promise<void> {
    // One timeout is enough to reopen: an SBD modem that misses an answer is in an unknown
    // state (mid-write, mid-session), and a reopen is cheaper than guessing (iridium-sbd.md 3.7).
    const at = new AtSession(link, { clock: this.ctx.clock, log: this.ctx.log, defaultTimeoutMs: this.timing.commandTimeoutMs, unresponsiveAfter: 1 });
    this.#at = at;
    link.onClose((reason) => {
      if (this.#at === at) this.#goOffline(reason);
    });
    at.onUnresponsive((reason) => this.lifecycle.fail(`the modem stopped answering (${reason})`));
    at.onUrc('SBDRING', () => this.#onRing());
    this.lifecycle.enter('initialising', `link open (${link.description}); initialising the modem`);
    // A reopened modem may have been reset: what this driver wrote is not known to be there,
    // nor that the gateway still knows it (registration).
    this.#mo = null;
    this.#registered = false;
    let alive = await at.run('AT');
    for (let i = 0; i < 2 && !alive.ok; i++) alive = await at.run('AT');
    if (!alive.ok) throw new DeviceError('ERR_IRIDIUM_MODEM', 'the modem does not answer AT', { retryable: true, facts: { command: 'AT', answer: alive.final ?? alive.error ?? undefined } });
    await this.#must(at, 'ATE0');
    await this.#must(at, 'AT&K0'); // three-wire links: no RTS/CTS (iridium-sbd.md 3.1)
    this.#identity = await readIdentity(at);
    await this.#must(at, `AT+SBDMTA=${this.settings.ring_alerts ? 1 : 0}`);
    await this.#leftovers(at);
  }

  /** What the modem held before this link: an MT message not yet cleared (a crash between
   *  reading and clearing: stored once, by its dedupe key), a missed ring alert, messages the
   *  last session said were waiting (AT+SBDSX, iridium-sbd.md 3.5). */
  async #leftovers(at: AtSession): Promise<void> {
    const r = await at.run('AT+SBDSX');
    const [, , mtFlag, mtmsn, ringFlag, waiting] = parseInfo(r.info.find((l) => l.startsWith('+SBDSX')) ?? '').args;
    if (!r.ok) return;
    if (mtFlag === 1) await this.#readMt(at, typeof mtmsn === 'number' ? mtmsn : null);
    if (ringFlag === 1) this.#ringPending = true;
    if (typeof waiting === 'number' && waiting > 0) this.#mtQueued = waiting;
  }

  /** Online: the timers, the network's time, registration for ring alerts, what waits. */
  #wentOnline(): void {
    this.#armPeriodic();
    this.#armHealth();
    const at = this.#at;
    if (at) void this.#exclusive(() => this.#readNetworkTime(at));
    if (this.settings.ring_alerts) void this.#exclusive(() => this.#register());
    if (this.#ringPending || this.#mtQueued > 0) this.#scheduleFetch(this.#ringPending ? 'ring' : 'queued');
  }

  #goOffline(reason: string): void {
    this.#at?.close(reason);
    this.#at = null;
    this.#timers = clearTimers(this.ctx.clock, this.#timers);
  }

  // ---- helpers ----------------------------------------------------------------------------

  /** Sessions, and the commands around each, never interleave. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => {});
    return run;
  }

  #notSent(wait: Wait): SendResult {
    if (wait.phase) this.#waitFor(wait);
    return { ok: false, retryable: true, notSent: true, retryAtMs: wait.untilMs, error: wait.reason };
  }

  /** Budget, signal: shown in health (phase `waiting`, the reason as last_error) until a
   *  session goes through. */
  #waitFor(wait: Wait): void {
    this.#waiting = wait.reason;
    if (this.lifecycle.phase === 'online' || this.lifecycle.phase === 'waiting') this.lifecycle.enter('waiting', wait.reason, { connected: true, lastError: wait.reason, reason: wait.cause });
  }

  async #must(at: AtSession, command: string): Promise<AtResult> {
    const r = await at.run(command);
    if (!r.ok) throw new DeviceError('ERR_IRIDIUM_MODEM', `the modem refused ${command} (${describeAtResult(r)})`, { retryable: true, facts: { command, answer: r.final ?? r.error ?? undefined, modemError: r.code ?? undefined } });
    return r;
  }

  #failed(result: SendResult & { ok: false }): SendResult {
    this.#counters.failed++;
    return result;
  }

}

export function createIridiumBearer(ctx: BearerContext, options: IridiumDriverOptions): Bearer {
  return new IridiumBearer(ctx, options);
}
