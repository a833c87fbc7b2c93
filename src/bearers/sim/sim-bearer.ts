import { z } from 'zod';
import type { TimerHandle } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { Bearer, BearerContext, BearerFactory, InboundFrame, OutboundFrame, SendResult } from '../bearer.ts';

// The built-in `sim` bearer (issue 4, docs/design.md section 6): no hardware, so every routing
// path can be tested and demonstrated without a radio. Interfaces bound to the same
// `sim://<channel>` hear each other's frames, like radios on one channel, never their own.
// The behaviour setting makes a bearer deliver, always fail, or fail a few times first, so
// retries and dead letters can be shown on demand.

export const SimSettings = z
  .strictObject({
    behaviour: z.enum(['deliver', 'fail', 'fail_then_deliver'], { error: 'behaviour must be deliver, fail or fail_then_deliver' }).default('deliver'),
    fail_count: z.number({ error: 'fail_count must be a whole number' }).int({ error: 'fail_count must be a whole number' }).min(0, { error: 'fail_count must be 0 or more' }).max(1000, { error: 'fail_count must be at most 1000' }).default(1)
      .describe('With fail_then_deliver: how many sends after start fail before sends deliver'),
    latency_ms: z.number({ error: 'latency_ms must be a whole number of milliseconds' }).int({ error: 'latency_ms must be a whole number of milliseconds' }).min(0, { error: 'latency_ms must be 0 or more' }).max(60_000, { error: 'latency_ms must be at most 60000' }).default(0)
      // Bounded well under the dispatcher's per-send time limit, so a slow sim is a slow
      // radio, not a timed-out one.
      .describe('How long each send takes (at most 60 s)'),
    mtu: z.number({ error: 'mtu must be a whole number of bytes' }).int({ error: 'mtu must be a whole number of bytes' }).min(1, { error: 'mtu must be at least 1' }).max(65535, { error: 'mtu must be at most 65535' }).default(230)
      .describe('Largest payload in bytes; larger frames are refused without retry'),
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

interface SimListener {
  readonly interfaceId: string;
  hear(frame: InboundFrame): void;
}

/** Which sim bearers are on which channel, in this process. */
export class SimChannels {
  readonly #channels = new Map<string, Set<SimListener>>();

  join(channel: string, listener: SimListener): void {
    let members = this.#channels.get(channel);
    if (!members) this.#channels.set(channel, (members = new Set()));
    members.add(listener);
  }

  leave(channel: string, listener: SimListener): void {
    const members = this.#channels.get(channel);
    if (!members) return;
    members.delete(listener);
    if (members.size === 0) this.#channels.delete(channel);
  }

  /** Hands the frame to every member but the sender; returns how many heard it. */
  broadcast(channel: string, sender: SimListener, frame: InboundFrame): number {
    let heard = 0;
    for (const member of [...(this.#channels.get(channel) ?? [])]) {
      if (member === sender) continue;
      member.hear({ ...frame, payload: frame.payload && frame.payload.slice(), meta: { ...frame.meta } });
      heard++;
    }
    return heard;
  }

  members(channel: string): number {
    return this.#channels.get(channel)?.size ?? 0;
  }

  /** Forgets every channel (tests: a clean slate between cases). */
  reset(): void {
    this.#channels.clear();
  }
}

/** The registry sim bearers use unless given another. */
export const simChannels = new SimChannels();

export function resetSimChannels(): void {
  simChannels.reset();
}

export class SimBearer implements Bearer {
  readonly kind = 'sim';
  readonly mtu: number;
  readonly #ctx: BearerContext;
  readonly #settings: SimSettings;
  readonly #registry: SimChannels;
  readonly #listener: SimListener;
  #channel: string | null = null;
  #sendsSinceStart = 0;
  readonly #waiting = new Set<{ timer: TimerHandle; done: (stopped: boolean) => void }>();
  readonly #counts = { sent: 0, failed: 0, received: 0 };

  constructor(ctx: BearerContext, registry: SimChannels = simChannels) {
    const parsed = SimSettings.safeParse(ctx.settings ?? {});
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({ path: ['settings', ...i.path].join('.'), message: i.message }));
      throw new AppError('ERR_BEARER_SETTINGS', 400, `sim interface ${ctx.interfaceName}: invalid settings`, { errors });
    }
    this.#ctx = ctx;
    this.#settings = parsed.data;
    this.#registry = registry;
    this.mtu = parsed.data.mtu;
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
    this.#sendsSinceStart = 0;
    this.#registry.join(channel, this.#listener);
    this.#ctx.log.info('sim_started', { interface: this.#ctx.interfaceName, channel, peers: this.#registry.members(channel) - 1 });
    this.#ctx.events.state({ connected: true, lastError: null, phase: 'online' });
  }

  async stop(): Promise<void> {
    if (this.#channel === null) return;
    this.#registry.leave(this.#channel, this.#listener);
    this.#channel = null;
    // Sends still waiting out their latency end now as retryable failures, so no caller
    // waits on a timer of a stopped bearer.
    for (const w of [...this.#waiting]) {
      this.#ctx.clock.clearTimeout(w.timer);
      w.done(true);
    }
    this.#ctx.events.state({ connected: false, lastError: null, phase: 'closed' });
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
    // Counted when the send begins, so concurrent sends fail in the order they were made.
    const nth = ++this.#sendsSinceStart;
    if (this.#settings.latency_ms > 0 && (await this.#wait(this.#settings.latency_ms))) {
      return { ok: false, retryable: true, error: 'stopped while sending' };
    }
    const { behaviour, fail_count } = this.#settings;
    if (behaviour === 'fail') return { ok: false, retryable: true, error: 'simulated failure (behaviour fail)' };
    if (behaviour === 'fail_then_deliver' && nth <= fail_count) {
      return { ok: false, retryable: true, error: `simulated failure (behaviour fail_then_deliver, ${nth} of ${fail_count})` };
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
    return { ok: true, meta: { sim_channel: channel, heard_by: heard } };
  }

  /** Resolves true when the bearer was stopped before the time passed. */
  #wait(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const entry = {
        timer: undefined as unknown as TimerHandle,
        done: (stopped: boolean) => {
          this.#waiting.delete(entry);
          resolve(stopped);
        },
      };
      this.#waiting.add(entry);
      entry.timer = this.#ctx.clock.setTimeout(() => entry.done(false), ms);
    });
  }

  stats(): Record<string, unknown> {
    return { ...this.#counts, channel: this.#channel, behaviour: this.#settings.behaviour, mtu: this.mtu };
  }
}

export const createSimBearer: BearerFactory = (ctx) => new SimBearer(ctx);
