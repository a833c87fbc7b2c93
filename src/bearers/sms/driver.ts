import { createHash } from 'node:crypto';
import type { Bearer, BearerContext, OutboundFrame, SendResult } from '../bearer.ts';
import type { TimerHandle } from '../../lib/clock.ts';
import { DeviceError } from '../device-error.ts';
import { AtSession, type AtResult } from '../shared/at/command-queue.ts';
import { parseInfo } from '../shared/codec/at.ts';
import { clearTimers, type DriverLifecycle } from '../shared/links/driver-lifecycle.ts';
import { SupervisedDriver, type SupervisedDriverOptions } from '../shared/links/supervised-driver.ts';
import type { Link } from '../shared/links/link.ts';
import { DailyBudget } from './budget.ts';
import { decodePdu, encodeSubmit, pduSubmitBody, normalizeNumber, planData, planMessage, type SmsStatusReport, type SmsTimestamp } from './codec/index.ts';
import { cmsFailure } from './errors.ts';
import { Inbox, type ReadyMessage } from './inbox.ts';
import { ReportBook } from './reports.ts';
import { SmsSettings } from './settings.ts';
import { sleep } from '../shared/links/open-link.ts';

// The SMS bearer (interface kind `sms`; docs/sms.md, docs/protocols/sms.md). The device
// supervisor keeps the link; on every fresh link this driver initialises the modem (echo off,
// numeric errors, the SIM PIN when asked and never a wrong one twice, PDU mode, new-message
// indications), then lists what the SIM holds. Received SMS are stored through the pipeline
// and deleted from the SIM only after the database committed them, so a power cut between the
// two reads them again (stored once: dedupe keys). Sending splits a message into parts, each
// AT+CMGS with its reference; with delivery_reports the delivery waits for every part's report.
//
// The network's time: each received SMS-DELIVER carries the centre's timestamp (TP-SCTS, with
// its zone; docs/protocols/sms.md 4.8), the network's clock when the message reached the
// centre. The newest one seen is told to the bridge (BearerEvents.time), which takes it only
// when the operator allows `sms` and it is ahead (docs/clock.md). An older one (a message that
// waited on the SIM) is not told: it adds nothing. AT+CCLK is not used: a modem's clock is the
// network's only if the network sent its time (NITZ) and the modem applied it, which the modem
// does not say.

export type SmsPhase = 'closed' | 'opening' | 'initialising' | 'online' | 'budget' | 'backoff';

export interface SmsTiming {
  /** AT+CMGS can take 60-120 s on 2G (docs/protocols/sms.md 4.2). */
  sendTimeoutMs: number;
  commandTimeoutMs: number;
  /** How long the SIM may take to say READY after the PIN. */
  simReadyMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_SMS_TIMING: SmsTiming = { sendTimeoutMs: 120_000, commandTimeoutMs: 5_000, simReadyMs: 10_000, backoffInitialMs: 1_000, backoffMaxMs: 60_000 };

// New-message indications the modems take (ModemManager's order, docs/protocols/sms.md 4.3),
// each storing messages and announcing them with +CMTI; the first two also give +CDS.
const CNMI_VARIANTS = ['2,1,0,1,0', '2,1,2,1,0', '2,1,0,2,0', '2,1,2,2,0', '2,1,0,0,0', '1,1,0,0,0'];

export type SmsDriverOptions = SupervisedDriverOptions<SmsTiming>;

export class SmsBearer extends SupervisedDriver<SmsPhase, SmsSettings, SmsTiming, SmsDriverOptions> implements Bearer {
  readonly kind = 'sms';
  readonly mtu: number;
  readonly concurrency: number;
  readonly maxSendMs: number;
  readonly #budget: DailyBudget;
  readonly #inbox: Inbox;
  readonly #reports: ReportBook;
  protected readonly lifecycle: DriverLifecycle<SmsPhase>;
  #at: AtSession | null = null;
  #registration: string | null = null;
  #signal: number | null = null;
  #modem: string | null = null;
  #cnmi: string | null = null;
  #reference = Math.floor(Math.random() * 256);
  #timers: { poll?: TimerHandle; budget?: TimerHandle } = {};
  /** A long message whose first parts went out before a part failed, by delivery: its retry
   *  sends only the rest, under the same concatenation reference, so the recipient's phone
   *  assembles one message and nobody pays for a part twice (kept in memory: after a restart
   *  the retry sends every part, as before). Without delivery reports only: with them, the
   *  reports of the earlier parts belong to the failed attempt. */
  readonly #partial = new Map<string, { to: string; digest: string; reference: number; total: number; sent: number; references: number[] }>();
  /** The newest centre timestamp seen (UTC ms) and what stats show of it. */
  #centreTimeMs = -Infinity;
  #centreTime: { time: string; local: string; read_at: string } | null = null;
  readonly #counters = { received: 0, sent_parts: 0, sent_messages: 0, failed: 0, reports: 0, undecodable: 0, deleted: 0, store_failures: 0, incomplete: 0 };

  constructor(ctx: BearerContext, options: SmsDriverOptions) {
    super(ctx, options, { timing: DEFAULT_SMS_TIMING, settings: SmsSettings });
    // 134 octets a part once a message is concatenated (docs/protocols/sms.md 4.4).
    this.mtu = this.settings.max_parts === 1 ? 140 : this.settings.max_parts * 134;
    // With reports a delivery waits minutes for them; others go out meanwhile.
    this.concurrency = this.settings.delivery_reports ? 4 : 1;
    this.maxSendMs = this.settings.max_parts * this.timing.sendTimeoutMs + (this.settings.delivery_reports ? this.settings.report_timeout_s * 1000 : 0) + 30_000;
    this.#budget = new DailyBudget(ctx.clock, this.settings.parts_per_day);
    this.#reports = new ReportBook(ctx.clock);
    this.#inbox = new Inbox(ctx.interfaceId);
    this.lifecycle = this.supervise({
      session: (link) => this.#session(link),
      opening: 'opening the modem',
      online: { why: 'modem initialised' },
      wentOnline: () => {
        this.#armPoll();
        if (!this.#budget.fits(1)) this.#budgetSpent(1);
      },
      stopping: () => {
        this.#goOffline('the interface stopped');
        // Messages the centre accepted and whose reports were not in yet: delivered as far as
        // anyone can still tell (sending them again would duplicate them).
        this.#reports.acceptAll('accepted by the SMS centre; the interface stopped before the status report came');
      },
    });
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const to = normalizeNumber(frame.to, this.settings.default_country_code ?? undefined);
    if (!to.ok) return this.#failed({ ok: false, retryable: false, error: `ERR_SMS_NUMBER: ${JSON.stringify(frame.to)} is not a phone number: ${to.reason}` });
    // Same delivery, same recipient, same bytes: a retry of a message cut short (#partial).
    const digest = createHash('sha256').update(frame.payload).digest('hex');
    const stored = this.settings.delivery_reports ? undefined : this.#partial.get(frame.deliveryId);
    const earlier = stored && stored.to === to.number && stored.digest === digest ? stored : undefined;
    const reference = earlier ? earlier.reference : (this.#reference = (this.#reference + 1) & 0xff);
    const options = { maxParts: this.settings.max_parts, reference };
    const planned = frame.kind === 'text' && frame.text !== null ? planMessage(frame.text, { ...options, encoding: this.settings.encoding }) : planData(frame.payload, options);
    if (!planned.ok) {
      const limit = `this interface sends at most ${this.settings.max_parts} parts (${this.mtu} bytes of data)`;
      return this.#failed({ ok: false, retryable: false, error: `ERR_SMS_TOO_LONG: ${planned.error}; ${limit} (add a truncate transform, or raise max_parts)` });
    }
    const allParts = planned.plan.parts;
    // A retry of a message whose first parts went out: only the rest (same reference, same plan).
    const resume = earlier && earlier.total === allParts.length ? earlier : undefined;
    const parts = resume ? allParts.slice(resume.sent) : allParts;
    const perDay = this.settings.parts_per_day;
    if (perDay !== null && parts.length > perDay) {
      return this.#failed({ ok: false, retryable: false, reason: 'budget', error: `ERR_SMS_BUDGET: ${parts.length} parts will never fit in the daily budget of ${perDay} parts (shorten the message or raise parts_per_day)` });
    }
    if (this.lifecycle.phase === 'budget' || !this.#budget.fits(parts.length)) return this.#budgetSpent(parts.length);
    const at = this.#at;
    if (this.lifecycle.phase !== 'online' || !at) {
      return { ok: false, retryable: true, error: `ERR_SMS_OFFLINE: the modem is not online (${this.lifecycle.phase}${this.lifecycle.state.lastError ? `: ${this.lifecycle.state.lastError}` : ''})` };
    }
    // Reserved now, before anything awaits, so concurrent sends cannot overspend; what is not
    // sent is given back.
    this.#budget.spend(parts.length);
    const references: number[] = [...(resume?.references ?? [])];
    // Registered before the first part: a part's report can come while the next is sent.
    const report = this.settings.delivery_reports ? this.#reports.open(to.number, this.settings.report_timeout_s * 1000) : null;
    for (const part of parts) {
      const pdu = encodeSubmit(part, { destination: to.number, smsc: this.settings.smsc, statusReport: this.settings.delivery_reports });
      const r = await at.run(`AT+CMGS=${pdu.tpduLength}`, { promptData: pduSubmitBody(pdu.hex), timeoutMs: this.timing.sendTimeoutMs });
      if (!r.ok) {
        const sentNow = references.length - (resume?.sent ?? 0);
        const unsent = parts.length - sentNow - (r.dataWritten ? 1 : 0);
        this.#budget.spend(-unsent);
        report?.cancel();
        if (!this.settings.delivery_reports && references.length > 0) {
          this.#partial.set(frame.deliveryId, { to: to.number, digest, reference, total: allParts.length, sent: references.length, references: [...references] });
        }
        return this.#failed(this.#sendFailure(r, references.length, allParts.length, !this.settings.delivery_reports));
      }
      this.#counters.sent_parts++;
      const mr = parseInfo(r.info.find((l) => l.startsWith('+CMGS')) ?? '').args[0];
      const messageReference = typeof mr === 'number' ? mr : -1;
      references.push(messageReference);
      report?.expect(messageReference);
    }
    this.#counters.sent_messages++;
    this.#partial.delete(frame.deliveryId);
    const meta = { parts: allParts.length, encoding: planned.plan.encoding, message_references: references, ...(resume ? { resumed_after_part: resume.sent } : {}) };
    if (!report) return { ok: true, meta: { ...meta, delivered: 'accepted by the SMS centre' } };
    const result = await report.done();
    if (result.ok) return { ok: true, meta: { ...meta, delivered: result.meta?.delivered ?? 'confirmed by the recipient\'s phone (status report)' } };
    return this.#failed(result);
  }

  stats(): Record<string, unknown> {
    return {
      phase: this.lifecycle.phase,
      device: this.lifecycle.device,
      modem: this.#modem,
      registration: this.#registration,
      signal_csq: this.#signal,
      new_message_indications: this.#cnmi,
      parts_sent_today: this.#budget.used,
      parts_left_today: this.#budget.left(),
      parts_waiting_for_reassembly: this.#inbox.waiting,
      awaiting_reports: this.#reports.size,
      centre_time: this.#centreTime,
      ...this.#counters,
    };
  }

  // ---- bring-up ---------------------------------------------------------------------------

  async #session(link: Link): Promise<void> {
    const at = new AtSession(link, { clock: this.ctx.clock, log: this.ctx.log, defaultTimeoutMs: this.timing.commandTimeoutMs });
    this.#at = at;
    link.onClose((reason) => {
      if (this.#at !== at) return;
      this.#goOffline(reason);
    });
    at.onUnresponsive((reason) => this.lifecycle.fail(`the modem stopped answering (${reason})`));
    at.onUrc('+CMTI', (u) => this.#onNewMessage(u.line));
    at.onUrc('+CDSI', (u) => this.#onNewMessage(u.line));
    at.onUrc('+CDS', (u) => {
      if (u.body) this.#onStatusReport(u.body, parseInfo(u.line).args[0]);
    });
    this.lifecycle.enter('initialising', `link open (${link.description}); initialising the modem`);
    let alive = await at.run('AT');
    for (let i = 0; i < 2 && !alive.ok; i++) alive = await at.run('AT');
    if (!alive.ok) throw new DeviceError('ERR_SMS_MODEM', 'the modem does not answer AT', { retryable: true, facts: { command: 'AT', answer: alive.final ?? alive.error ?? undefined } });
    await this.#must(at, 'ATE0');
    await this.#must(at, 'AT+CMEE=1');
    await this.#unlockSim(at);
    await this.#must(at, 'AT+CMGF=0');
    if (this.settings.smsc) await this.#must(at, `AT+CSCA="${this.settings.smsc}",145`);
    this.#cnmi = null;
    for (const variant of CNMI_VARIANTS) {
      if ((await at.run(`AT+CNMI=${variant}`)).ok) {
        this.#cnmi = variant;
        break;
      }
    }
    const identity = await at.run('AT+CGMM');
    this.#modem = identity.ok ? (identity.info[0] ?? null) : null;
    await this.#health(at);
    // What arrived while the bridge was away, and what a crash left between storing and deleting.
    await this.#readAll(at);
  }

  /** SIM PIN: sent only when asked, never twice when refused (docs/sms.md, "PIN"). */
  async #unlockSim(at: AtSession): Promise<void> {
    const state = async () => parseInfo((await at.run('AT+CPIN?')).info.find((l) => l.startsWith('+CPIN')) ?? '').args[0];
    let sim = await state();
    if (sim === 'READY') return;
    if (sim === 'SIM PUK' || sim === 'SIM PUK2') throw new DeviceError('ERR_SMS_SIM_PUK', 'the SIM is locked and asks for its PUK: unlock it in a phone', { retryable: false, facts: { command: 'AT+CPIN?', answer: sim } });
    if (sim !== 'SIM PIN') throw new DeviceError('ERR_SMS_SIM', `the SIM is not ready (${String(sim ?? 'no answer to AT+CPIN?')})`, { retryable: true, facts: { command: 'AT+CPIN?', answer: sim === undefined ? undefined : String(sim) } });
    const pin = this.settings.pin;
    if (!pin || pin === '<redacted>') throw new DeviceError('ERR_SMS_PIN_REQUIRED', 'the SIM asks for a PIN: set the interface\'s pin setting', { retryable: false, facts: { command: 'AT+CPIN?', answer: sim } });
    if (this.ctx.state.get(REFUSED_PIN) === pinDigest(this.ctx.interfaceId, pin)) throw pinWrong(null);
    const r = await at.run(`AT+CPIN="${pin}"`, { timeoutMs: this.timing.simReadyMs });
    if (!r.ok) {
      this.ctx.state.set(REFUSED_PIN, pinDigest(this.ctx.interfaceId, pin));
      throw pinWrong(r.code);
    }
    const until = this.ctx.clock.now() + this.timing.simReadyMs;
    while ((sim = await state()) !== 'READY') {
      if (this.ctx.clock.now() > until) throw new DeviceError('ERR_SMS_SIM', 'the SIM took the PIN but did not become ready', { retryable: true, facts: { command: 'AT+CPIN?', answer: sim === undefined ? undefined : String(sim) } });
      await this.#sleep(500);
    }
  }

  async #health(at: AtSession): Promise<void> {
    const creg = parseInfo((await at.run('AT+CREG?')).info.find((l) => l.startsWith('+CREG')) ?? '').args;
    const stat = creg.length >= 2 ? creg[1] : creg[0];
    this.#registration = REGISTRATION[String(stat)] ?? (stat === undefined ? null : `unknown (${String(stat)})`);
    const csq = parseInfo((await at.run('AT+CSQ')).info.find((l) => l.startsWith('+CSQ')) ?? '').args[0];
    this.#signal = typeof csq === 'number' && csq !== 99 ? csq : null;
  }

  // ---- online -----------------------------------------------------------------------------

  #goOffline(reason: string): void {
    this.#at?.close(reason);
    this.#at = null;
    this.#timers = clearTimers(this.ctx.clock, this.#timers);
  }

  /** Modems drop indications: list the SIM every poll_s, and store what waited too long. */
  #armPoll(): void {
    if (this.#timers.poll) this.ctx.clock.clearTimeout(this.#timers.poll);
    this.#timers.poll = this.ctx.clock.setTimeout(async () => {
      this.#timers.poll = undefined;
      const at = this.#at;
      if (!at || (this.lifecycle.phase !== 'online' && this.lifecycle.phase !== 'budget')) return;
      await this.#readAll(at);
      await this.#health(at);
      if (this.#at === at) this.#armPoll();
    }, this.settings.poll_s * 1000);
  }

  /** The day's parts are spent: nothing is sent (not an attempt) until the next UTC day. */
  #budgetSpent(needed: number): SendResult {
    const at = this.#budget.nextDayMs();
    const reason = `ERR_SMS_BUDGET: the daily budget of ${this.settings.parts_per_day} parts is spent (${this.#budget.left()} left, ${needed} needed); sending resumes at ${new Date(at).toISOString()}`;
    if (this.lifecycle.phase === 'online') {
      this.lifecycle.enter('budget', reason, { connected: false, lastError: reason, reason: 'budget' });
      if (!this.#timers.budget) {
        this.#timers.budget = this.ctx.clock.setTimeout(() => {
          this.#timers.budget = undefined;
          if (this.lifecycle.phase === 'budget') this.lifecycle.enter('online', 'a new day: the send budget is full again', { connected: true, lastError: null });
        }, at - this.ctx.clock.now());
      }
    }
    return { ok: false, retryable: true, notSent: true, retryAtMs: at, error: reason };
  }

  // ---- receiving --------------------------------------------------------------------------

  #onNewMessage(line: string): void {
    const index = parseInfo(line).args[1];
    const at = this.#at;
    if (typeof index !== 'number' || !at) return;
    void this.#readIndex(at, index);
  }

  async #readIndex(at: AtSession, index: number): Promise<void> {
    if (!this.#inbox.claim(index)) return;
    const r = await at.run(`AT+CMGR=${index}`);
    if (!r.ok || !r.bodies[0]) {
      this.#inbox.release(index);
      return;
    }
    await this.#take(at, index, r.bodies[0]);
  }

  async #readAll(at: AtSession): Promise<void> {
    const r = await at.run('AT+CMGL=4', { timeoutMs: 30_000 });
    if (r.ok) {
      for (const [i, line] of r.info.entries()) {
        const index = parseInfo(line).args[0];
        const body = r.bodies[i];
        if (typeof index === 'number' && body && this.#inbox.claim(index)) await this.#take(at, index, body);
      }
    }
    for (const ready of this.#inbox.expired(this.ctx.clock.now(), this.settings.reassembly_timeout_s * 1000)) {
      this.#counters.incomplete++;
      await this.#store(at, ready);
    }
  }

  /** One PDU from SIM index `index`: a message part or a status report. */
  async #take(at: AtSession, index: number, hex: string): Promise<void> {
    const pdu = decodePdu(hex);
    if (!pdu.ok) {
      // Kept on the SIM (nothing is deleted that was not stored) and counted.
      this.#counters.undecodable++;
      this.ctx.log.warn('sms.undecodable', { index, error: pdu.error });
      return;
    }
    if (pdu.value.type === 'status-report') {
      this.#onReport(pdu.value);
      await this.#delete(at, [index]);
      return;
    }
    if (pdu.value.type !== 'deliver') return;
    this.#centreTimeSeen(pdu.value.timestamp);
    const ready = this.#inbox.add(index, pdu.value, this.ctx.clock.now());
    if (ready) await this.#store(at, ready);
  }

  /** A DELIVER's centre timestamp: told when it is the newest seen. A PDU whose timestamp was
   *  malformed has none (the decoder warned) and tells nothing. */
  #centreTimeSeen(timestamp: SmsTimestamp | null): void {
    const ms = timestamp ? Date.parse(timestamp.utc) : NaN;
    if (!timestamp || !Number.isFinite(ms) || ms <= this.#centreTimeMs) return;
    this.#centreTimeMs = ms;
    this.#centreTime = { time: timestamp.utc, local: timestamp.local, read_at: new Date(this.ctx.clock.now()).toISOString() };
    this.ctx.events.time?.(ms);
  }

  /** Through the pipeline; deleted from the SIM only once stored (or a known duplicate). */
  async #store(at: AtSession, ready: ReadyMessage): Promise<void> {
    // Deleted only once it is on disk: the answer may wait for the commit (BearerEvents.receive).
    const stored = await this.ctx.events.receive(ready.frame);
    if (stored === false) {
      // The database failed: the SMS stays on the SIM and is read again at the next listing.
      this.#counters.store_failures++;
      for (const i of ready.indexes) this.#inbox.release(i);
      return;
    }
    this.#counters.received++;
    await this.#delete(at, ready.indexes);
  }

  async #delete(at: AtSession, indexes: number[]): Promise<void> {
    for (const index of indexes) {
      const r = await at.run(`AT+CMGD=${index}`);
      if (r.ok) this.#counters.deleted++;
      this.#inbox.release(index);
    }
  }

  /** +CDS: <length> and the report's PDU (the length says whether an SMSC prefix leads it). */
  #onStatusReport(hex: string, length: unknown): void {
    const pdu = decodePdu(hex, typeof length === 'number' ? { tpduLength: length } : {});
    if (pdu.ok && pdu.value.type === 'status-report') this.#onReport(pdu.value);
    else this.#counters.undecodable++;
  }

  #onReport(report: SmsStatusReport): void {
    this.#counters.reports++;
    this.#reports.settle(report);
  }

  // ---- helpers ----------------------------------------------------------------------------

  async #must(at: AtSession, command: string): Promise<AtResult> {
    const r = await at.run(command);
    if (!r.ok) throw new DeviceError('ERR_SMS_MODEM', `the modem refused ${command} (${r.error}${r.code !== null ? ` ${r.code}` : ''})`, { retryable: true, facts: { command, answer: r.final ?? r.error ?? undefined, modemError: r.code ?? undefined } });
    return r;
  }

  #sendFailure(r: AtResult, sentParts: number, totalParts: number, resumes: boolean): SendResult & { ok: false } {
    const partial = sentParts > 0 ? ` after ${sentParts} of ${totalParts} parts went out (${resumes ? 'a retry sends only the rest' : 'a retry sends them again'})` : '';
    if (r.error === 'TIMEOUT') {
      return { ok: false, retryable: true, error: `ERR_SMS_TIMEOUT: the modem did not confirm the SMS within ${this.timing.sendTimeoutMs / 1000} s${r.dataWritten ? ' (it may have been sent)' : ''}${partial}` };
    }
    if (r.error === 'CLOSED' || r.error === 'WRITE') return { ok: false, retryable: true, error: `ERR_SMS_OFFLINE: the modem went away while sending${partial}` };
    const failure = cmsFailure(r.code);
    return { ...failure, error: failure.error + partial };
  }

  #failed(result: SendResult & { ok: false }): SendResult {
    this.#counters.failed++;
    return result;
  }

  #sleep(ms: number): Promise<void> {
    return sleep(this.ctx.clock, ms);
  }
}

/** The SIM refused this PIN (now, with its +CME ERROR number, or on an earlier try). */
const pinWrong = (modemError: number | null) => new DeviceError('ERR_SMS_PIN_WRONG', 'the SIM refused the PIN; it is not sent again (three wrong PINs lock the SIM): set the right pin', {
  retryable: false, facts: { command: 'AT+CPIN', ...(modemError !== null ? { modemError } : {}) },
});

// The PIN a SIM refused, kept in the driver's state (the database, as a digest: never the PIN
// itself), so no restart of the interface or of the bridge sends the same wrong PIN again. A
// new pin setting is tried once.
const REFUSED_PIN = 'refused_pin_sha256';
const pinDigest = (interfaceId: string, pin: string) => createHash('sha256').update(`${interfaceId}:${pin}`).digest('hex');

// 27.007 +CREG <stat>.
const REGISTRATION: Record<string, string> = {
  '0': 'not registered', '1': 'home network', '2': 'searching', '3': 'registration denied', '4': 'unknown', '5': 'roaming',
};

export function createSmsBearer(ctx: BearerContext, options: SmsDriverOptions): Bearer {
  return new SmsBearer(ctx, options);
}
