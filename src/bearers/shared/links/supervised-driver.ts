import type { BearerContext } from '../../bearer.ts';
import { DriverLifecycle, type DriverLifecycleParts, SupervisedBearer } from './driver-lifecycle.ts';
import type { Link } from './link.ts';

// What every radio and modem driver is made of before its own parts: the bearer context, the
// options it was built with (how to open a port value, timing overrides), its timing with the
// defaults filled in, its parsed settings, and a lifecycle that opens through those options
// and backs off by that timing.

/** The timing every supervised driver has: how long the supervisor waits between opens. */
export interface BackoffTiming {
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export interface SupervisedDriverOptions<T extends BackoffTiming> {
  /** Opens a port value (the supervisor's openLink in the bridge; a test's own link). */
  openLink: (device: string) => Promise<Link>;
  /** Overrides of the driver's default timing (tests shorten them). */
  timing?: Partial<T>;
}

export abstract class SupervisedDriver<
  P extends string,
  S,
  T extends BackoffTiming,
  O extends SupervisedDriverOptions<T> = SupervisedDriverOptions<T>,
> extends SupervisedBearer<P> {
  abstract readonly kind: string;
  readonly settings: S;
  protected readonly ctx: BearerContext;
  protected readonly options: O;
  protected readonly timing: T;

  constructor(ctx: BearerContext, options: O, defaults: { timing: T; settings: { parse(raw: unknown): S } }) {
    super();
    this.ctx = ctx;
    this.options = options;
    this.timing = { ...defaults.timing, ...options.timing };
    this.settings = defaults.settings.parse(ctx.settings ?? {});
  }

  /** The driver's lifecycle: the phase log is named by its kind, the device opens through
   *  options.openLink, and the supervisor backs off by the timing. `ctx` for a driver that
   *  logs its phases with a child logger. */
  protected supervise(
    parts: Omit<DriverLifecycleParts, 'kind' | 'open' | 'backoff'>,
    ctx: ConstructorParameters<typeof DriverLifecycle>[0] = this.ctx,
  ): DriverLifecycle<P> {
    return new DriverLifecycle<P>(ctx, {
      kind: this.kind,
      open: (device) => this.options.openLink(device),
      backoff: { initialMs: this.timing.backoffInitialMs, maxMs: this.timing.backoffMaxMs },
      ...parts,
    });
  }
}
