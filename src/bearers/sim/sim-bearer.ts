import { z } from 'zod';
import type { TimerHandle } from '../../lib/clock.ts';
import { DeviceError } from '../device-error.ts';
import type { Bearer, BearerContext, BearerFactory, OutboundFrame, SendResult } from '../bearer.ts';
import { type SimChannels, type SimListener, simChannels } from './channels.ts';

export { resetSimChannels, SimChannels, simChannels } from './channels.ts';

// The built-in `sim` bearer (docs/design.md section 6): no hardware, so every routing
// path can be tested and demonstrated without a radio. Interfaces bound to the same
// `sim://<channel>` hear each other's frames, like radios on one channel, never their own.
// The behaviour setting makes a bearer deliver, always fail, or fail a few times first, so
// retries and dead letters can be shown on demand; or wait for a simulated acknowledgement
// that comes, never comes, or comes back as a failure, so delivery policies that act on
// acknowledgements can be tried on a desk. Its link can be taken down and brought up again
// (setLink, served by POST /api/sim/{id}/link in routes.ts) like a radio that went away.

export const SIM_BEHAVIOURS = ['deliver', 'fail', 'fail_then_deliver', 'ack_after', 'never_ack', 'fail_after'] as const;
export type SimBehaviour = (typeof SIM_BEHAVIOURS)[number];
/** Behaviours whose sends wait for an acknowledgement (or its failure) after the frame. */
const WAITING: ReadonlySet<SimBehaviour> = new Set(['ack_after', 'never_ack', 'fail_after']);

/** Applied by the bearer, not by the schema, so settings stored before these fields existed
 *  (and their exports) stay exactly as they were. */
export const SIM_ACK_DEFAULTS = { ack_ms: 1000, error: 'simulated failure (behaviour fail_after)', retryable: true } as const;

/** Sends the dispatcher may have waiting at once on a behaviour that waits for its
 *  acknowledgement, like a Meshtastic radio (bearers/meshtastic/driver.ts): one send that is
 *  never acknowledged must not hold up the interface's queue. */
const WAITING_CONCURRENCY = 8;

/** The MTU of a sim interface whose settings name none. */
export const SIM_DEFAULT_MTU = 230;

/** How long the dispatcher lets a never_ack send stay open: a day, far over its own 120 s
 *  limit (bridge/engine/dispatcher.ts), so the send stays open as documented and ends only
 *  when the bearer stops or its link goes down. A day, not forever: a send forgotten by a
 *  test still ends, as a retryable "did not answer" failure. */
const NEVER_ACK_MAX_SEND_MS = 24 * 60 * 60 * 1000;

// Every message names the field, what it must be and what it got (docs/style.md habit 8).
const received = (value: unknown): string => {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}...` : text;
};
const must = (field: string, expected: string) => ({ error: (issue: { input?: unknown }) => `${field} must be ${expected}; got ${received(issue.input)}` });
const whole = (field: string, what: string, min: number, lowest: string, max: number) =>
  z.number(must(field, what)).int(must(field, what)).min(min, must(field, lowest)).max(max, must(field, `at most ${max}`));

const errorText = must('error', 'a text of 1 to 500 characters');

export const SimSettings = z
  .strictObject({
    behaviour: z.enum(SIM_BEHAVIOURS, must('behaviour', 'deliver, fail, fail_then_deliver, ack_after, never_ack or fail_after')).default('deliver')
      .describe('What a send does. deliver: the frame goes out, the send succeeds. fail: every send fails, retryably, nothing goes out. '
        + 'fail_then_deliver: the first fail_count sends after each start fail, then sends deliver. '
        + 'ack_after: the frame goes out and the send waits ack_ms for the simulated acknowledgement, then succeeds. '
        + 'never_ack: the frame goes out and the send waits for an acknowledgement that never comes (it ends when the interface stops or its link goes down). '
        + 'fail_after: nothing goes out; after ack_ms the send fails with `error`. '
        + 'The last three take up to 8 sends at once.'),
    fail_count: whole('fail_count', 'a whole number', 0, '0 or more', 1000).default(1)
      .describe('With fail_then_deliver: how many sends after start fail before sends deliver'),
    latency_ms: whole('latency_ms', 'a whole number of milliseconds', 0, '0 or more', 60_000).default(0)
      // Bounded well under the dispatcher's per-send time limit, so a slow sim is a slow
      // radio, not a timed-out one.
      .describe('How long each send takes before the frame goes out (at most 60 s)'),
    mtu: whole('mtu', 'a whole number of bytes', 1, 'at least 1', 65535).default(SIM_DEFAULT_MTU)
      .describe('Largest payload in bytes; larger frames are refused without retry'),
    // No defaults in the schema (SIM_ACK_DEFAULTS): see there.
    ack_ms: whole('ack_ms', 'a whole number of milliseconds', 0, '0 or more', 3_600_000).optional()
      .describe('With ack_after: how long after the frame went out its acknowledgement comes; with fail_after: how long until the send fails. Default 1000, at most 3600000 (an hour)'),
    error: z.string(errorText).min(1, errorText).max(500, errorText).optional()
      .describe('With fail_after: the error the send fails with. Default "simulated failure (behaviour fail_after)"'),
    retryable: z.boolean(must('retryable', 'true or false')).optional()
      .describe('With fail_after: whether the failure is retried (default true); false ends the delivery at once'),
  })
  .describe('Settings of a sim interface');
export type SimSettings = z.infer<typeof SimSettings>;

const SIM_DEVICE = /^sim:\/\/([A-Za-z0-9][A-Za-z0-9._-]{0,63})$/;

export const SimDevice = z
  .string()
  .regex(SIM_DEVICE, { error: 'device must be sim://<channel>, the channel 1 to 64 letters, digits, ".", "_" or "-"' })
  .describe('A simulated radio channel: every sim interface bound to the same sim://<channel> hears the others');

/** The channel name of a sim:// device, or null when the value is not one. */
export function simChannelOf(device: string): string | null {
  return SIM_DEVICE.exec(device)?.[1] ?? null;
}

/** Why a wait ended early: the bearer stopped, or its link went down. */
type Interrupted = 'stopped' | 'offline';

export class SimBearer implements Bearer {
  readonly kind = 'sim';
  readonly mtu: number;
  /** Set only for the behaviours that wait for an acknowledgement (WAITING); the others keep
   *  the contract's defaults (one send at a time, 120 s). */
  readonly concurrency?: number;
  readonly maxSendMs?: number;
  readonly #ctx: BearerContext;
  readonly #settings: SimSettings;
  readonly #registry: SimChannels;
  readonly #listener: SimListener;
  #channel: string | null = null;
  /** The link switch (setLink): down, the bearer is off its channel and sends fail. */
  #linkUp = true;
  #sendsSinceStart = 0;
  readonly #waiting = new Set<{ timer: TimerHandle | null; done: (why: Interrupted | null) => void }>();
  readonly #counts = { sent: 0, failed: 0, received: 0 };

  constructor(ctx: BearerContext, registry: SimChannels = simChannels) {
    const parsed = SimSettings.safeParse(ctx.settings ?? {});
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({ path: ['settings', ...i.path].join('.'), message: i.message }));
      throw new DeviceError('ERR_BEARER_SETTINGS', `sim interface ${ctx.interfaceName}: invalid settings`, { retryable: false, facts: { fields: errors } });
    }
    this.#ctx = ctx;
    this.#settings = parsed.data;
    this.#registry = registry;
    this.mtu = parsed.data.mtu;
    const { behaviour, latency_ms } = parsed.data;
    if (WAITING.has(behaviour)) {
      this.concurrency = WAITING_CONCURRENCY;
      // ack_after and fail_after answer after latency and ack_ms; a minute to spare. The
      // dispatcher never allows less than its own 120 s.
      this.maxSendMs = behaviour === 'never_ack' ? NEVER_ACK_MAX_SEND_MS : latency_ms + this.#ackMs + 60_000;
    }
    this.#listener = {
      interfaceId: ctx.interfaceId,
      hear: (frame) => {
        this.#counts.received++;
        try {
          this.#ctx.events.receive(frame);
        } catch (error) {
          this.#ctx.log.warn('sim_receive_handler_failed', { interface: ctx.interfaceName, error: (error as Error).message });
        }
      },
    };
  }

  get #ackMs(): number {
    return this.#settings.ack_ms ?? SIM_ACK_DEFAULTS.ack_ms;
  }

  /** Whether the link is up (setLink); true while stopped, so a start begins online. */
  get linkUp(): boolean {
    return this.#linkUp;
  }

  /** Whether the bearer runs on a sim channel (started, not stopped). */
  get running(): boolean {
    return this.#channel !== null;
  }

  async start(device: string): Promise<void> {
    const channel = simChannelOf(device);
    if (this.#channel !== null) await this.stop();
    if (channel === null) {
      // A bad device is a state, never a thrown error (bearer.ts contract).
      const lastError = `not a sim device: ${JSON.stringify(device)} (expected sim://<channel>)`;
      this.#ctx.log.warn('sim_bad_device', { interface: this.#ctx.interfaceName, device });
      this.#ctx.events.state({ connected: false, lastError, phase: 'closed' });
      return;
    }
    this.#channel = channel;
    this.#linkUp = true;
    this.#sendsSinceStart = 0;
    this.#registry.join(channel, this.#listener);
    this.#registry.started(this, this.#ctx.interfaceId);
    this.#ctx.log.info('sim_started', { interface: this.#ctx.interfaceName, channel, peers: this.#registry.members(channel) - 1 });
    this.#ctx.events.state({ connected: true, lastError: null, phase: 'online' });
  }

  async stop(): Promise<void> {
    if (this.#channel === null) return;
    this.#registry.leave(this.#channel, this.#listener);
    this.#registry.stopped(this, this.#ctx.interfaceId);
    this.#channel = null;
    this.#linkUp = true;
    // Sends still waiting out their latency or their acknowledgement end now as retryable
    // failures, so no caller waits on a timer of a stopped bearer.
    this.#release('stopped');
    this.#ctx.events.state({ connected: false, lastError: null, phase: 'closed' });
  }

  /**
   * Takes the link down or brings it up again, settings and binding untouched: down, the
   * bearer leaves its channel (it hears nothing, and peers' heard_by no longer counts it),
   * reports itself disconnected, ends every waiting send with ERR_SIM_OFFLINE (as a
   * Meshtastic radio that went away ends its acknowledgement waits, bearers/meshtastic/acks.ts)
   * and refuses sends until it is up. Up, it rejoins and reports itself online. Setting the
   * state it already has changes nothing. Returns false when the bearer is not running.
   */
  setLink(up: boolean): boolean {
    const channel = this.#channel;
    if (channel === null) return false;
    if (up === this.#linkUp) return true;
    this.#linkUp = up;
    if (up) {
      this.#registry.join(channel, this.#listener);
      this.#ctx.log.info('sim_link_up', { interface: this.#ctx.interfaceName, channel, next: 'sends and hears again' });
      this.#ctx.events.state({ connected: true, lastError: null, phase: 'online' });
    } else {
      this.#registry.leave(channel, this.#listener);
      this.#ctx.log.info('sim_link_down', { interface: this.#ctx.interfaceName, channel, waiting_sends: this.#waiting.size, next: 'sends fail with ERR_SIM_OFFLINE until the link is up' });
      this.#release('offline');
      this.#ctx.events.state({ connected: false, lastError: this.#offline(), phase: 'closed' });
    }
    return true;
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const result = await this.#attempt(frame);
    if (result.ok) this.#counts.sent++;
    else this.#counts.failed++;
    return result;
  }

  async #attempt(frame: OutboundFrame): Promise<SendResult> {
    // Size first: a frame that can never fit fails for good, whether or not the bearer runs.
    if (frame.payload.length > this.mtu) {
      return { ok: false, retryable: false, error: `frame of ${frame.payload.length} bytes exceeds the sim mtu of ${this.mtu} bytes` };
    }
    if (this.#channel === null) return { ok: false, retryable: true, error: 'not started' };
    // Before counting: a send refused while the link is down does not use up a planned failure.
    if (!this.#linkUp) return { ok: false, retryable: true, error: this.#offline() };
    // Counted when the send begins, so concurrent sends fail in the order they were made.
    const nth = ++this.#sendsSinceStart;
    if (this.#settings.latency_ms > 0) {
      const why = await this.#wait(this.#settings.latency_ms);
      if (why !== null) return this.#interrupted(why, 'stopped while sending');
    }
    const { behaviour, fail_count } = this.#settings;
    if (behaviour === 'fail') return { ok: false, retryable: true, error: 'simulated failure (behaviour fail)' };
    if (behaviour === 'fail_then_deliver' && nth <= fail_count) {
      return { ok: false, retryable: true, error: `simulated failure (behaviour fail_then_deliver, ${nth} of ${fail_count})` };
    }
    if (behaviour === 'fail_after') {
      // Nothing goes out (like fail); the answer comes after ack_ms, as a radio's negative
      // acknowledgement does.
      const why = await this.#wait(this.#ackMs);
      if (why !== null) return this.#interrupted(why, 'stopped while waiting for an acknowledgement');
      return { ok: false, retryable: this.#settings.retryable ?? SIM_ACK_DEFAULTS.retryable, error: this.#settings.error ?? SIM_ACK_DEFAULTS.error };
    }
    const channel = this.#channel;
    if (channel === null) return { ok: false, retryable: true, error: 'stopped while sending' };
    const heard = this.#registry.broadcast(channel, this.#listener, {
      from: this.#ctx.interfaceName,
      to: frame.to,
      channel: frame.channel,
      kind: frame.kind,
      text: frame.text,
      payload: frame.payload,
      meta: { sim_channel: channel, sender_interface_id: this.#ctx.interfaceId },
    });
    const meta = { sim_channel: channel, heard_by: heard };
    if (behaviour === 'ack_after' || behaviour === 'never_ack') {
      // The frame is out (peers heard it); the send now waits for the simulated node's
      // acknowledgement: after ack_ms, or never (only stop or a link down end the wait).
      const why = await this.#wait(behaviour === 'ack_after' ? this.#ackMs : null);
      if (why !== null) return this.#interrupted(why, 'stopped while waiting for an acknowledgement');
      return { ok: true, meta: { ...meta, acknowledged_after_ms: this.#ackMs } };
    }
    return { ok: true, meta };
  }

  #offline(): string {
    return `ERR_SIM_OFFLINE: the link of sim interface '${this.#ctx.interfaceName}' is down (taken down on purpose); sends fail until it is brought up again`;
  }

  #interrupted(why: Interrupted, stopped: string): SendResult {
    return { ok: false, retryable: true, error: why === 'offline' ? this.#offline() : stopped };
  }

  /** Resolves null once the time passed (never, for null), or why the wait ended early. */
  #wait(ms: number | null): Promise<Interrupted | null> {
    return new Promise((resolve) => {
      const entry = {
        timer: null as TimerHandle | null,
        done: (why: Interrupted | null) => {
          this.#waiting.delete(entry);
          resolve(why);
        },
      };
      this.#waiting.add(entry);
      if (ms !== null) entry.timer = this.#ctx.clock.setTimeout(() => entry.done(null), ms);
    });
  }

  #release(why: Interrupted): void {
    for (const w of [...this.#waiting]) {
      if (w.timer !== null) this.#ctx.clock.clearTimeout(w.timer);
      w.done(why);
    }
  }

  stats(): Record<string, unknown> {
    return { ...this.#counts, channel: this.#channel, behaviour: this.#settings.behaviour, mtu: this.mtu };
  }
}

export const createSimBearer: BearerFactory = (ctx) => new SimBearer(ctx);
