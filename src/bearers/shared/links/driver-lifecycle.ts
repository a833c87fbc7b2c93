import type { BearerEvents, BearerState } from '../../bearer.ts';
import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import { type DeviceSupervisor, superviseDevice } from './device-supervisor.ts';
import type { Link } from './link.ts';

// The supervised lifecycle every radio and modem driver shares (Meshtastic, RNode, MeshCore,
// SMS, Iridium). Between start(device) and stop() it holds one DeviceSupervisor, which keeps the
// link up and runs the driver's bring-up on each fresh link; it keeps the driver's phase and the
// state the driver reports, and enters the supervisor's phases (opening, backoff, online) as
// they come. The driver brings what is its own: the bring-up, what going online starts, and
// what stopping releases. stop() keeps one order for all: the driver lets go of its session
// (a polite goodbye while the link is still open), the link closes, then the phase is closed.

export interface DriverLifecycleParts {
  /** Names the phase log line: `<kind>.phase`. */
  kind: string;
  open(device: string): Promise<Link>;
  /** The driver's bring-up over a fresh link; resolves once the device is online. */
  session(link: Link): Promise<void>;
  backoff: { initialMs: number; maxMs: number };
  /** What the phase log says while the supervisor opens the device ('opening the modem'). */
  opening: string;
  /** What the phase log says on going online, and the state to show then (default: the
   *  supervisor's). */
  online: { why: string; state?: (supervisor: BearerState) => BearerState };
  /** Once the device is online and the phase entered: timers, work that waited. */
  wentOnline?(): void;
  /** At start, after a running supervisor stopped and before the new one opens the device. */
  starting?(): void;
  /** At stop, while the link is still open: the goodbye, the session's timers and waiters. */
  stopping?(): void | Promise<void>;
}

export class DriverLifecycle<P extends string> {
  readonly #ctx: { clock: Clock; log: Logger; events: Pick<BearerEvents, 'state'> };
  readonly #parts: DriverLifecycleParts;
  #phase = 'closed' as P;
  #state: BearerState = { connected: false, lastError: null, phase: 'closed' };
  #supervisor: DeviceSupervisor | null = null;
  #device: string | null = null;

  constructor(ctx: { clock: Clock; log: Logger; events: Pick<BearerEvents, 'state'> }, parts: DriverLifecycleParts) {
    this.#ctx = ctx;
    this.#parts = parts;
  }

  get phase(): P {
    return this.#phase;
  }

  /** The state last reported (a copy). */
  get state(): BearerState {
    return { ...this.#state };
  }

  /** The port value of the last start (kept after a stop, for stats). */
  get device(): string | null {
    return this.#device;
  }

  get running(): boolean {
    return this.#supervisor !== null;
  }

  /** Supervises `device`; a running supervisor is stopped first, with the driver's clean-up. */
  async start(device: string): Promise<void> {
    if (this.#supervisor) await this.stop();
    this.#parts.starting?.();
    this.#device = device;
    const { open, session, backoff } = this.#parts;
    this.#supervisor = superviseDevice(this.#ctx, device, { open, session, backoff, onState: (s) => this.#onSupervisorState(s) });
  }

  /** The driver's clean-up, then the link closes and the phase becomes closed, without an error. */
  async stop(): Promise<void> {
    const supervisor = this.#supervisor;
    if (!supervisor) return;
    // From here on fail() does nothing: the supervisor is on its way out.
    this.#supervisor = null;
    await this.#parts.stopping?.();
    await supervisor.stop();
    this.enter('closed' as P, 'stop requested', { connected: false, lastError: null });
  }

  /** The device misbehaves on an open link: drops it with the reason (the supervisor backs off
   *  and reopens). */
  fail(reason: string): void {
    this.#supervisor?.fail(reason);
  }

  /** Enters a phase and reports the state: the one given, or still disconnected with the last
   *  error (and its reason) kept. */
  enter(phase: P, why: string, state?: BearerState): void {
    if (phase !== this.#phase) this.#ctx.log.info(`${this.#parts.kind}.phase`, { from: this.#phase, to: phase, why });
    this.#phase = phase;
    const previous = this.#state;
    const next = state ?? { connected: false, lastError: previous.lastError, ...(previous.reason ? { reason: previous.reason } : {}) };
    this.#state = { ...next, phase };
    this.#ctx.events.state({ ...this.#state });
  }

  /** The supervisor's phases: online once the bring-up resolved, opening and backoff between
   *  links. Closed is entered by stop() itself. */
  #onSupervisorState(s: BearerState): void {
    const phase = s.phase ?? 'closed';
    if (phase === 'online') {
      this.enter('online' as P, this.#parts.online.why, this.#parts.online.state?.(s) ?? s);
      this.#parts.wentOnline?.();
    } else if (phase === 'backoff' || phase === 'opening') {
      this.enter(phase as P, s.lastError ?? this.#parts.opening, s);
    }
  }
}

/** What a supervised driver's Bearer members are, from its lifecycle: start, stop and the phase
 *  (tests and stats read it). The driver makes its lifecycle in its constructor. */
export abstract class SupervisedBearer<P extends string> {
  protected abstract readonly lifecycle: DriverLifecycle<P>;

  get phase(): P {
    return this.lifecycle.phase;
  }

  start(device: string): Promise<void> {
    return this.lifecycle.start(device);
  }

  stop(): Promise<void> {
    return this.lifecycle.stop();
  }
}

/** Clears a session's timers (a driver keeps them by name) and gives the empty set to keep:
 *  what a driver does when its device goes offline. */
export function clearTimers(clock: Clock, timers: Record<string, TimerHandle | undefined>): {} {
  for (const t of Object.values(timers)) if (t) clock.clearTimeout(t);
  return {};
}
