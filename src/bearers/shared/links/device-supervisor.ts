import type { BearerState } from '../../bearer.ts';
import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/log.ts';
import type { Link } from './link.ts';
import { errorText } from '../../device-error.ts';

// Keeps one interface's device link up (docs/design.md section 7): open, hand the link to the
// driver's session, and when the link goes away or the session fails, report
// `connected: false` with the reason and try again after an exponential backoff. A missing,
// unplugged or garbage-speaking device is a state, never an exception out of here.
// stop() ends the retries and closes the link.

export const BACKOFF_INITIAL_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;
// A link that stayed online this long starts the backoff over from the initial delay; one
// that drops sooner keeps growing it, so a board that resets every few seconds is not
// hammered at the initial rate.
export const BACKOFF_RESET_AFTER_MS = 30_000;

export interface DeviceSupervisorOptions {
  /** The port value, for log lines and the open function. */
  device: string;
  /** Opens the device (usually openLink from open-link.ts with the driver's options). */
  open: (device: string) => Promise<Link>;
  /**
   * The driver's bring-up over a fresh link (detect, configure, verify). Resolves when the
   * device is online; rejects with the reason when it is not. The link stays the driver's
   * until it closes.
   */
  session: (link: Link) => Promise<void>;
  onState?: (state: BearerState) => void;
  clock: Clock;
  log: Logger;
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
}

export class DeviceSupervisor {
  readonly #o: DeviceSupervisorOptions;
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetAfterMs: number;
  #state: BearerState = { connected: false, lastError: null, phase: 'closed' };
  /** The last failure was opening the device (not its session). */
  #openFailed = false;
  #running = false;
  #generation = 0;
  #failures = 0;
  #link: Link | null = null;
  #timer: TimerHandle | null = null;
  #onlineAt: number | null = null;
  #failureReason: string | null = null;
  #nextAttemptAt: number | null = null;

  constructor(options: DeviceSupervisorOptions) {
    this.#o = options;
    this.#initialMs = options.backoff?.initialMs ?? BACKOFF_INITIAL_MS;
    this.#maxMs = options.backoff?.maxMs ?? BACKOFF_MAX_MS;
    this.#resetAfterMs = options.backoff?.resetAfterMs ?? BACKOFF_RESET_AFTER_MS;
  }

  get state(): BearerState {
    return { ...this.#state };
  }

  /** The link while the device is online, else null. */
  get link(): Link | null {
    return this.#state.connected ? this.#link : null;
  }

  /** When the next attempt is due (epoch ms), while waiting in backoff; else null. */
  get nextAttemptAt(): number | null {
    return this.#nextAttemptAt;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#failures = 0;
    void this.#attempt();
  }

  /** Ends retries and closes the link; the state becomes closed with no error. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#generation++;
    this.#cancelTimer();
    const link = this.#link;
    this.#link = null;
    this.#setState({ connected: false, lastError: null, phase: 'closed' });
    this.#o.log.info('device.stopped', { device: this.#o.device });
    if (link) await link.close().catch(() => {});
  }

  /**
   * For the driver: the device misbehaves although the link is open (garbage, a reset
   * indication, a wrong echo). Closes the link; the supervisor retries with this reason shown.
   */
  fail(reason: string): void {
    const link = this.#link;
    if (!link) return;
    this.#failureReason = reason;
    void link.close().catch(() => {});
  }

  async #attempt(): Promise<void> {
    const generation = ++this.#generation;
    this.#nextAttemptAt = null;
    this.#failureReason = null;
    this.#setState({ connected: false, lastError: this.#state.lastError, reason: this.#state.reason ?? null, phase: 'opening' });
    let link: Link;
    try {
      link = await this.#o.open(this.#o.device);
    } catch (error) {
      if (generation === this.#generation) this.#down(errorText(error), true);
      return;
    }
    if (generation !== this.#generation) {
      await link.close().catch(() => {}); // stopped while opening
      return;
    }
    this.#link = link;
    // The device opened: why it could not be opened before (a port another interface held) is
    // over, and would read as the reason of the bring-up now running. A failure of the session
    // itself stays shown until the next one is known or the device is online.
    if (this.#openFailed) {
      this.#openFailed = false;
      this.#setState({ connected: false, lastError: null, phase: 'opening' });
    }
    let closedReason: string | null = null;
    link.onClose((reason) => {
      closedReason = reason;
      if (generation !== this.#generation) return;
      this.#link = null;
      this.#down(this.#failureReason ?? reason);
    });
    try {
      await Promise.resolve().then(() => this.#o.session(link));
    } catch (error) {
      if (generation !== this.#generation || closedReason !== null) return;
      this.#failureReason = errorText(error);
      await link.close().catch(() => {}); // onClose reports it and schedules the retry
      return;
    }
    if (generation !== this.#generation || closedReason !== null) return;
    this.#onlineAt = this.#o.clock.now();
    this.#setState({ connected: true, lastError: null, phase: 'online' });
    this.#o.log.info('device.online', { device: this.#o.device, link: link.description });
  }

  #down(reason: string, openFailed = false): void {
    if (!this.#running) return;
    this.#openFailed = openFailed;
    if (this.#onlineAt !== null && this.#o.clock.now() - this.#onlineAt >= this.#resetAfterMs) this.#failures = 0;
    this.#onlineAt = null;
    const delay = Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#failures, 30));
    this.#failures++;
    this.#cancelTimer();
    this.#nextAttemptAt = this.#o.clock.now() + delay;
    this.#setState({ connected: false, lastError: reason, reason: 'offline', phase: 'backoff' });
    this.#o.log.warn('device.down', { device: this.#o.device, reason, retry_in_ms: delay });
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = null;
      if (this.#running) void this.#attempt();
    }, delay);
  }

  #cancelTimer(): void {
    if (this.#timer !== null) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#nextAttemptAt = null;
  }

  #setState(state: BearerState): void {
    const changed = state.connected !== this.#state.connected || state.lastError !== this.#state.lastError || state.reason !== this.#state.reason || state.phase !== this.#state.phase;
    this.#state = state;
    if (!changed || !this.#o.onState) return;
    try {
      this.#o.onState({ ...state });
    } catch (error) {
      this.#o.log.error('device.state_listener_failed', { device: this.#o.device, error: errorText(error) });
    }
  }
}

/** What a driver gives to have its device kept up: how to open it, its bring-up over a fresh
 *  link, where its states go, and its backoff (initial and largest wait). */
export interface SupervisedDevice {
  open: DeviceSupervisorOptions['open'];
  session: DeviceSupervisorOptions['session'];
  onState: NonNullable<DeviceSupervisorOptions['onState']>;
  backoff: { initialMs: number; maxMs: number };
}

/** The supervisor every driver starts in start(device): the bearer context's clock, a logger
 *  naming the device, started at once. */
export function superviseDevice(ctx: { clock: Clock; log: Logger }, device: string, parts: SupervisedDevice): DeviceSupervisor {
  const supervisor = new DeviceSupervisor({ device, clock: ctx.clock, log: ctx.log.child({ device }), ...parts });
  supervisor.start();
  return supervisor;
}
