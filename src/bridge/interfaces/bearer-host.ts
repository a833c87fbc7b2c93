import type { Bearer, BearerState, InboundFrame } from '../../bearers/bearer.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import { kinds, type InterfaceKind } from './kinds.ts';
import type { InterfaceRow } from './store.ts';

// Keeps one bearer running for every interface that is enabled and bound, and none for the
// others: disabling or unbinding an interface stops its traffic both ways and releases the
// device; its configuration stays in the database. Link state and counters live here, in
// memory: they describe this process's view of the hardware, not configuration.

export interface InterfaceRuntime {
  connected: boolean;
  last_error: string | null;
  phase: string;
  last_rx_at: string | null;
  last_tx_at: string | null;
  counters: { sent: number; failed: number; received: number };
}

interface Running {
  bearer: Bearer;
  signature: string;
}

export interface BearerHostEvents {
  receive(interfaceId: string, frame: InboundFrame): void;
  /** The link came up or went down: the dispatcher re-checks that interface's queue. */
  stateChanged(interfaceId: string, connected: boolean): void;
}

export class BearerHost {
  readonly #running = new Map<string, Running>();
  readonly #runtime = new Map<string, InterfaceRuntime>();
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #events: BearerHostEvents;

  constructor(log: Logger, clock: Clock, events: BearerHostEvents) {
    this.#log = log;
    this.#clock = clock;
    this.#events = events;
  }

  runtime(id: string): InterfaceRuntime {
    let r = this.#runtime.get(id);
    if (!r) {
      r = { connected: false, last_error: null, phase: 'closed', last_rx_at: null, last_tx_at: null, counters: { sent: 0, failed: 0, received: 0 } };
      this.#runtime.set(id, r);
    }
    return r;
  }

  bearer(id: string): Bearer | undefined {
    return this.#running.get(id)?.bearer;
  }

  stats(id: string): Record<string, unknown> {
    return this.#running.get(id)?.bearer.stats() ?? {};
  }

  /** Brings the running bearer in line with the stored interface (start, stop or restart). */
  async apply(row: InterfaceRow): Promise<void> {
    const wanted = row.enabled && row.device !== null;
    const signature = JSON.stringify([row.kind, row.device, row.settings]);
    const current = this.#running.get(row.id);
    if (current && (!wanted || current.signature !== signature)) await this.stop(row.id);
    if (!wanted || this.#running.has(row.id)) {
      if (!wanted) this.#setState(row.id, { connected: false, lastError: null, phase: row.device === null ? 'unbound' : 'disabled' });
      return;
    }
    const spec = kinds[row.kind as InterfaceKind];
    if (!spec?.bearer) {
      this.#setState(row.id, { connected: false, lastError: `no driver for interface kind '${row.kind}' in this release`, phase: 'closed' });
      return;
    }
    const log = this.#log.child({ interface: row.name });
    const bearer = spec.bearer({
      interfaceId: row.id,
      interfaceName: row.name,
      settings: row.settings,
      log,
      clock: this.#clock,
      events: {
        receive: (frame) => {
          // A frame that arrives after the bearer was replaced or stopped is not accepted.
          if (this.#running.get(row.id)?.bearer !== bearer) return;
          const rt = this.runtime(row.id);
          rt.counters.received++;
          rt.last_rx_at = new Date(this.#clock.now()).toISOString();
          this.#events.receive(row.id, frame);
        },
        state: (state) => {
          if (this.#running.get(row.id)?.bearer !== bearer) return;
          this.#setState(row.id, state);
        },
      },
    });
    this.#running.set(row.id, { bearer, signature });
    try {
      await bearer.start(row.device!);
    } catch (error) {
      // The contract says start never throws; a driver bug must still not take the bridge down.
      this.#setState(row.id, { connected: false, lastError: `driver failed to start: ${(error as Error).message}`, phase: 'closed' });
    }
  }

  async stop(id: string): Promise<void> {
    const current = this.#running.get(id);
    if (!current) return;
    this.#running.delete(id);
    try {
      await current.bearer.stop();
    } catch (error) {
      this.#log.warn('bearer_stop_failed', { interface_id: id, error: (error as Error).message });
    }
    this.#setState(id, { connected: false, lastError: null, phase: 'closed' });
  }

  forget(id: string): void {
    this.#runtime.delete(id);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#running.keys()].map((id) => this.stop(id)));
  }

  noteSend(id: string, ok: boolean, error?: string): void {
    const rt = this.runtime(id);
    if (ok) {
      rt.counters.sent++;
      rt.last_tx_at = new Date(this.#clock.now()).toISOString();
    } else {
      rt.counters.failed++;
      if (error) rt.last_error = error;
    }
  }

  #setState(id: string, state: BearerState): void {
    const rt = this.runtime(id);
    const was = rt.connected;
    rt.connected = state.connected;
    rt.last_error = state.lastError;
    rt.phase = state.phase ?? (state.connected ? 'online' : 'closed');
    if (was !== state.connected) this.#events.stateChanged(id, state.connected);
  }
}
