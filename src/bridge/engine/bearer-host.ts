import type { Bearer, BearerReason, BearerState, DeviceConfig, DeviceSection, DriverState, InboundFrame, NodeReport } from '../../bearers/bearer.ts';
import type { DriverModule } from '../../bearers/driver-module.ts';
import { driverFor } from '../../bearers/drivers.ts';
import { openLink, type OpenLinkOptions } from '../../bearers/shared/links/open-link.ts';
import type { Link } from '../../bearers/shared/links/link.ts';
import type { Clock } from '../../lib/clock.ts';
import type { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';
import type { RouterEvent } from './events.ts';
import type { DriverStateStore } from './driver-state.ts';
import type { InterfaceRow } from './rows.ts';

// Keeps one bearer running for every interface that is enabled and bound, and none for the
// others: disabling or unbinding an interface stops its traffic both ways and releases the
// device; its configuration stays in the database. Link state and counters live here, in
// memory: they describe this process's view of the hardware, not configuration.

export interface InterfaceRuntime {
  connected: boolean;
  last_error: string | null;
  /** The kind of condition last_error names (bearers/bearer.ts, BearerReason), or null. */
  reason: BearerReason | null;
  phase: string;
  last_rx_at: string | null;
  last_tx_at: string | null;
  counters: { sent: number; failed: number; received: number; duplicates: number };
}

interface Running {
  bearer: Bearer;
  signature: string;
  /** Ends the bearer's device-configuration subscriptions. */
  unsubscribe: Array<() => void>;
}

/** Where heard frames go: the pipeline ('duplicate': a repeated frame, not stored). */
export interface FrameSink {
  /** Stores a heard frame: 'duplicate' for a repeat, false when it was not taken (the database
   *  is locked and `deviceKeeps`: the driver offers it again), a WaitingFrame when it waits in
   *  memory (engine/held-frames.ts). Throws when storing failed. */
  receive(interfaceId: string, frame: InboundFrame, deviceKeeps: boolean, notRepeated: boolean): unknown;
  /** True when what receive() stored waits for a group's commit... */
  pending?(): boolean;
  /** ...and how to wait for it: the function settles with it (rejected: the COMMIT failed and
   *  the frame is gone, also when asked after the failure). */
  whenCommitted?(options?: { hurry?: boolean }): () => Promise<void>;
}

/** A frame kept in memory until it can be stored: `stored` settles true once it is on disk,
 *  false when it was lost. */
export interface WaitingFrame {
  stored: Promise<boolean>;
}

const isWaitingFrame = (taken: unknown): taken is WaitingFrame => typeof taken === 'object' && taken !== null && (taken as WaitingFrame).stored instanceof Promise;

/**
 * The answer to a driver for a frame whose group has not committed yet: a promise of the commit,
 * made only when the driver looks at it (awaits it, calls then). A radio that cannot take a frame
 * back ignores the answer, and must not count among the acknowledgements that make a group
 * commit early (db/transaction.ts, MAX_WAITING).
 */
function answerOnCommit(commit: () => Promise<boolean>): PromiseLike<boolean> {
  let answer: Promise<boolean> | undefined;
  return {
    then: (onAnswer, onError) => (answer ??= commit()).then(onAnswer, onError),
  };
}

/** Where reported mesh nodes go: the node database. */
export interface NodeSink {
  upsert(interfaceId: string, report: NodeReport, nowIso: string): void;
}

/** The bridge side of the device-configuration channel (bridge/config/device-config.ts). */
export interface DeviceConfigSource {
  desired(section: DeviceSection): Record<string, unknown> | null;
  /** Committed changes of any device section; returns the unsubscribe. */
  subscribe(listener: (section: DeviceSection, value: Record<string, unknown>, part?: string) => void): () => void;
  report(interfaceId: string, section: DeviceSection, values: Record<string, unknown> | null): void;
}

export interface BearerHostDeps {
  log: Logger;
  clock: Clock;
  /** Heard frames go here. */
  sink: FrameSink;
  nodes: NodeSink;
  /** Link changes are told here (the dispatcher wakes a queue whose link came up). */
  events: EventStream<RouterEvent>;
  deviceConfig: DeviceConfigSource;
  driverState: DriverStateStore;
  /** The driver of a kind (default: the registered modules, bearers/drivers.ts). */
  drivers?: (kind: string) => DriverModule | undefined;
  /** Extra options for every openLink (tests give their own port lister or claims). */
  linkOptions?: OpenLinkOptions;
}

export class BearerHost {
  readonly #running = new Map<string, Running>();
  readonly #runtime = new Map<string, InterfaceRuntime>();
  readonly #d: BearerHostDeps;
  readonly #log: Logger;
  readonly #clock: Clock;

  constructor(deps: BearerHostDeps) {
    this.#d = deps;
    this.#log = deps.log;
    this.#clock = deps.clock;
  }

  runtime(id: string): InterfaceRuntime {
    let r = this.#runtime.get(id);
    if (!r) {
      r = { connected: false, last_error: null, reason: null, phase: 'closed', last_rx_at: null, last_tx_at: null, counters: { sent: 0, failed: 0, received: 0, duplicates: 0 } };
      this.#runtime.set(id, r);
    }
    return r;
  }

  bearer(id: string): Bearer | undefined {
    return this.#running.get(id)?.bearer;
  }

  /** What the interface's driver keeps across restarts (its stats view shows it while the
   *  interface is stopped; its routes may write it, DriverApi.state). */
  driverState(id: string): DriverState {
    return {
      get: (key) => this.#d.driverState.get(id, key),
      set: (key, value) => this.#d.driverState.set(id, key, value, new Date(this.#clock.now()).toISOString()),
    };
  }

  /** The bridge's wall clock, as the bearers are given it. */
  now(): number {
    return this.#clock.now();
  }

  /** Whether this release can run the kind: its module has a bearer factory. */
  hasDriver(kind: string): boolean {
    return (this.#d.drivers ?? driverFor)(kind)?.create !== undefined;
  }

  /** What the running bearers' devices would not take of a device-section write (Bearer.deviceProblems). */
  deviceProblems(section: DeviceSection, value: Record<string, unknown>, part?: string): string[] {
    return [...this.#running.values()].flatMap((r) => r.bearer.deviceProblems?.(section, value, part) ?? []);
  }

  stats(id: string): Record<string, unknown> {
    return this.#running.get(id)?.bearer.stats() ?? {};
  }

  /** Brings the running bearer in line with the stored interface (start, stop or restart). */
  async apply(row: InterfaceRow): Promise<void> {
    const wanted = row.enabled && row.device !== null;
    const signature = JSON.stringify([row.kind, row.device, row.settings]);
    const running = this.#running.get(row.id);
    if (running && (!wanted || running.signature !== signature)) await this.stop(row.id);
    if (!wanted || this.#running.has(row.id)) {
      if (!wanted) this.#setState(row.id, { connected: false, lastError: null, phase: row.device === null ? 'unbound' : 'disabled' });
      return;
    }
    const driver = (this.#d.drivers ?? driverFor)(row.kind);
    if (!driver?.create) {
      this.#setState(row.id, { connected: false, lastError: `no driver for interface kind '${row.kind}' in this release`, phase: 'closed' });
      return;
    }
    const log = this.#log.child({ interface: row.name });
    const unsubscribe: Array<() => void> = [];
    // Set once create() returned: a driver that reports from its constructor is not current yet.
    const created: { bearer?: Bearer } = {};
    const isCurrent = () => created.bearer !== undefined && this.#running.get(row.id)?.bearer === created.bearer;
    const bearer = driver.create({
      interfaceId: row.id,
      interfaceName: row.name,
      settings: row.settings,
      log,
      clock: this.#clock,
      openLink: (device) => this.#openLink(driver, row, device, log),
      deviceConfig: this.#deviceConfig(driver, row.id, unsubscribe, isCurrent),
      state: this.driverState(row.id),
      events: {
        receive: (frame, options) => {
          // A frame that arrives after the bearer was replaced or stopped is not accepted.
          if (this.#running.get(row.id)?.bearer !== bearer) return false;
          const rt = this.runtime(row.id);
          rt.counters.received++;
          rt.last_rx_at = new Date(this.#clock.now()).toISOString();
          const failed = (error: unknown) => {
            this.#log.error('receive_failed', { interface_id: row.id, error: (error as Error).message });
            return false;
          };
          let taken: unknown;
          try {
            taken = this.#d.sink.receive(row.id, frame, driver.keepsUnstoredFrames === true, driver.framesNotRepeated === true);
          } catch (error) {
            return failed(error);
          }
          if (taken === false) return false;
          // Waits in memory (another process holds the lock): "stored" once it is on disk.
          if (isWaitingFrame(taken)) return answerOnCommit(() => taken.stored);
          if (taken === 'duplicate') rt.counters.duplicates++;
          // Stored in a group that commits shortly: "stored" once it is on disk, "not
          // stored" if the commit fails.
          const sink = this.#d.sink;
          if (sink.pending?.() && sink.whenCommitted) {
            const wait = sink.whenCommitted({ hurry: options?.watchOnly !== true });
            return answerOnCommit(() => wait().then(() => true, failed));
          }
          return true;
        },
        nodes: (reports) => {
          if (this.#running.get(row.id)?.bearer !== bearer) return;
          const now = new Date(this.#clock.now()).toISOString();
          try {
            const network = driver.nodeNetwork;
            for (const r of reports) this.#d.nodes.upsert(row.id, r.network || !network ? r : { ...r, network }, now);
          } catch (error) {
            this.#log.error('node_report_failed', { interface_id: row.id, error: (error as Error).message });
          }
        },
        state: (state) => {
          if (this.#running.get(row.id)?.bearer !== bearer) return;
          this.#setState(row.id, state);
        },
        time: (atMs) => {
          if (this.#running.get(row.id)?.bearer !== bearer) return;
          this.#d.events.emit({ type: 'time', interfaceId: row.id, kind: row.kind, atMs });
        },
      },
    });
    created.bearer = bearer;
    this.#running.set(row.id, { bearer, signature, unsubscribe });
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
    for (const off of current.unsubscribe) off();
    try {
      await current.bearer.stop();
    } catch (error) {
      this.#log.warn('bearer_stop_failed', { interface_id: id, error: (error as Error).message });
    }
    this.#setState(id, { connected: false, lastError: null, phase: 'closed' });
  }

  /** The interface is gone: its runtime view and what its driver kept. */
  forget(id: string): void {
    this.#runtime.delete(id);
    this.#d.driverState.forget(id);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#running.keys()].map((id) => this.stop(id)));
  }

  noteSend(id: string, ok: boolean, error?: string, reason?: BearerReason): void {
    const rt = this.runtime(id);
    if (ok) {
      rt.counters.sent++;
      rt.last_tx_at = new Date(this.#clock.now()).toISOString();
    } else {
      rt.counters.failed++;
      if (error) {
        rt.last_error = error;
        rt.reason = reason ?? null;
      }
    }
  }

  #setState(id: string, state: BearerState): void {
    const rt = this.runtime(id);
    const was = rt.connected;
    rt.connected = state.connected;
    rt.last_error = state.lastError;
    rt.reason = state.reason ?? null;
    rt.phase = state.phase ?? (state.connected ? 'online' : 'closed');
    if (was !== state.connected) this.#d.events.emit({ type: 'link', interfaceId: id, connected: state.connected });
  }

  /** The driver's probe serves `auto` and its simulator `sim://`; the interface claims the device. */
  #openLink(driver: DriverModule, row: InterfaceRow, device: string, log: Logger): Promise<Link> {
    const baudRate = typeof driver.baudRate === 'function' ? driver.baudRate(row.settings) : driver.baudRate;
    return openLink(device, {
      clock: this.#clock, log, ...this.#d.linkOptions, owner: row.id, ownerName: row.name, probe: driver.probe, openSim: driver.openSim, defaultTcpPort: driver.tcpPort, bleFraming: driver.bleFraming, baudRate,
    });
  }

  /** The sections the driver declared, and nothing else; reports and listeners stop with the bearer. */
  #deviceConfig(driver: DriverModule, interfaceId: string, unsubscribe: Array<() => void>, current: () => boolean): DeviceConfig {
    const declared = new Set<DeviceSection>(driver.deviceSections ?? []);
    const check = (section: DeviceSection) => {
      if (!declared.has(section)) throw new Error(`driver ${driver.kind} did not declare the device section '${section}'`);
    };
    return {
      desired: (section) => {
        check(section);
        return this.#d.deviceConfig.desired(section);
      },
      onChange: (listener) => {
        const off = this.#d.deviceConfig.subscribe((section, value, part) => {
          if (declared.has(section) && current()) listener(section, value, part);
        });
        unsubscribe.push(off);
        return off;
      },
      report: (section, values) => {
        check(section);
        if (current()) this.#d.deviceConfig.report(interfaceId, section, values);
      },
    };
  }
}
