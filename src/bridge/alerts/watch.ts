import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';
import type { ConfigValues } from '../config/sections.ts';
import type { RouterEvent } from '../engine/events.ts';
import type { IngressMessage } from '../engine/pipeline.ts';
import { AlertBook } from './book.ts';
import type { AlertStore } from './store.ts';

// Alerts as messages (docs/alerts.md): conditions the operator turned on (bridge.alerts) are
// watched, and each one raised or cleared becomes a text message from `alert`, which access
// rules route like any other (an SMS to the operator's phone, a webhook, a satellite text).
// Interface and delivery conditions follow the router's events; nodes, the uplink and the
// disk are looked at once a minute.

export type AlertLimits = ConfigValues['bridge']['alerts'];

/** The sender of every alert message: what a rule's `from` selects. */
export const ALERT_SENDER = 'alert';
/** How often nodes, the uplink and the disk are looked at. */
export const ALERT_SCAN_MS = 60_000;
/** A battery alert clears this many points above its threshold (no flapping at the line). */
const BATTERY_HYSTERESIS_PCT = 5;

export interface AlertDeps {
  clock: Clock;
  log: Logger;
  limits: () => AlertLimits;
  bridgeName: () => string;
  router: EventStream<RouterEvent>;
  interfaceOf(id: string): { name: string; kind: string; enabled: boolean } | undefined;
  runtime(id: string): { connected: boolean; last_error: string | null };
  store: AlertStore;
  uplinkState: () => string;
  freeBytes: () => number | null;
  /** Puts the alert message into the router (Pipeline.ingest). */
  send(message: IngressMessage): void;
}

function deadLettersKey(interfaceId: string): string {
  return `dead_letters:${interfaceId}`;
}

export class AlertWatch {
  readonly #d: AlertDeps;
  readonly book = new AlertBook();
  readonly #offline = new Map<string, TimerHandle>();
  #scan: TimerHandle | null = null;
  #uplinkDownSince: number | null = null;
  #unsubscribe: (() => void) | null = null;
  /** Interfaces with a dead letter whose alert check has not run yet. */
  readonly #deadPending = new Set<string>();

  constructor(deps: AlertDeps) {
    this.#d = deps;
  }

  start(): void {
    this.#unsubscribe = this.#d.router.subscribe((event) => {
      if (event.type === 'link') this.#link(event.interfaceId, event.connected);
      // Inside the transaction that wrote the state: the alert goes in once it is over. Only
      // a dead letter, or a delivery that may clear one (raised, or about to be), can change
      // an alert.
      else if (event.type === 'delivery') {
        const { interface_id: id, state } = event.delivery;
        if (state === 'dead') this.#deadPending.add(id);
        else if (state !== 'delivered' || !(this.#deadPending.has(id) || this.book.isRaised(deadLettersKey(id)))) return;
        setImmediate(() => this.#delivery(id, state));
      }
    });
    const tick = () => {
      this.scan();
      this.#scan = this.#d.clock.setTimeout(tick, ALERT_SCAN_MS);
    };
    this.#scan = this.#d.clock.setTimeout(tick, ALERT_SCAN_MS);
  }

  stop(): void {
    this.#unsubscribe?.();
    if (this.#scan) this.#d.clock.clearTimeout(this.#scan);
    for (const t of this.#offline.values()) this.#d.clock.clearTimeout(t);
    this.#offline.clear();
  }

  // ---- interfaces and deliveries ------------------------------------------------------------

  #link(id: string, connected: boolean): void {
    const key = `interface_offline:${id}`;
    const timer = this.#offline.get(id);
    if (timer) this.#d.clock.clearTimeout(timer);
    this.#offline.delete(id);
    const iface = this.#d.interfaceOf(id);
    if (connected) {
      const was = this.book.clear(key);
      if (was) this.#emit('cleared', key, { interface_id: id }, `interface ${iface?.name ?? id} is online again after ${minutes(this.#d.clock.now() - was.at)} of alert`);
      return;
    }
    const after = this.#d.limits().interface_offline_s;
    // An interface the operator disabled is not a fault.
    if (after === null || !iface?.enabled) return;
    this.#offline.set(id, this.#d.clock.setTimeout(() => {
      this.#offline.delete(id);
      const now = this.#d.interfaceOf(id);
      const rt = this.#d.runtime(id);
      if (!now?.enabled || rt.connected || !this.book.raise(key, this.#d.clock.now())) return;
      this.#emit('raised', key, { interface_id: id, last_error: rt.last_error }, `interface ${now.name} (${now.kind}) offline for ${after} s${rt.last_error ? `: ${rt.last_error}` : ''}`);
    }, after * 1000));
  }

  #delivery(interfaceId: string, state: string): void {
    if (state === 'dead') this.#deadPending.delete(interfaceId);
    const key = deadLettersKey(interfaceId);
    const name = this.#d.interfaceOf(interfaceId)?.name ?? interfaceId;
    if (state === 'delivered') {
      if (this.book.clear(key)) this.#emit('cleared', key, { interface_id: interfaceId }, `interface ${name} delivers again`);
    } else if (state === 'dead' && this.#d.limits().dead_letters && this.book.raise(key, this.#d.clock.now())) {
      this.#emit('raised', key, { interface_id: interfaceId }, `a delivery on interface ${name} dead-lettered (GET /api/deliveries?state=dead)`);
    }
  }

  // ---- what is looked at once a minute ------------------------------------------------------

  /** Looks at nodes, the uplink and the disk now (also what the timer runs). */
  scan(): void {
    const limits = this.#d.limits();
    const now = this.#d.clock.now();
    try {
      if (limits.node_silent_min !== null) this.#silentNodes(now, limits.node_silent_min * 60_000);
      if (limits.battery_below_pct !== null) this.#batteries(now, limits.battery_below_pct);
    } catch (error) {
      this.#d.log.warn('alert_scan_failed', { error: (error as Error).message });
    }
    this.#uplink(now, limits.uplink_down_min);
    this.#disk(limits.disk_free_below_mb);
  }

  #silentNodes(now: number, silentMs: number): void {
    // A node raises once, when its silence crosses the threshold (within two scans of it), so
    // nodes gone long before the bridge started do not raise at all.
    const from = iso(now - silentMs - 2 * ALERT_SCAN_MS);
    for (const n of this.#d.store.heardBetween(from, iso(now - silentMs), 200)) {
      const key = `node_silent:${n.node_id}`;
      if (this.book.raise(key, now)) {
        this.#emit('raised', key, { node_id: n.node_id, last_heard_at: n.last_heard_at }, `node ${label(n)} not heard for ${minutes(now - Date.parse(n.last_heard_at))} (last ${n.last_heard_at})`);
      }
    }
    for (const r of this.book.raised().filter((x) => x.key.startsWith('node_silent:'))) {
      const id = r.key.slice('node_silent:'.length);
      const heard = this.#d.store.heardBetween(iso(r.at), iso(now + 1), 1_000).find((n) => n.node_id === id);
      if (heard && this.book.clear(r.key)) this.#emit('cleared', r.key, { node_id: id, last_heard_at: heard.last_heard_at }, `node ${label(heard)} heard again`);
    }
  }

  #batteries(now: number, below: number): void {
    for (const n of this.#d.store.heardBetween(iso(now - 3_600_000), iso(now + 1), 1_000)) {
      if (n.battery_level === null) continue;
      const key = `battery_low:${n.node_id}`;
      if (n.battery_level < below && this.book.raise(key, now)) {
        this.#emit('raised', key, { node_id: n.node_id, battery_level: n.battery_level }, `node ${label(n)} battery at ${n.battery_level}% (below ${below}%)`);
      } else if (n.battery_level >= below + BATTERY_HYSTERESIS_PCT && this.book.clear(key)) {
        this.#emit('cleared', key, { node_id: n.node_id, battery_level: n.battery_level }, `node ${label(n)} battery back at ${n.battery_level}%`);
      }
    }
  }

  #uplink(now: number, downMin: number | null): void {
    const state = this.#d.uplinkState();
    const key = 'uplink_down';
    if (state === 'off' || state === 'connected' || state === 'waiting_for_hub') {
      this.#uplinkDownSince = null;
      const was = this.book.clear(key);
      if (was) this.#emit('cleared', key, {}, `hub uplink connected again after ${minutes(now - was.at)} of alert`);
      return;
    }
    this.#uplinkDownSince ??= now;
    if (downMin !== null && now - this.#uplinkDownSince >= downMin * 60_000 && this.book.raise(key, now)) {
      this.#emit('raised', key, { state }, `hub uplink not connected for ${minutes(now - this.#uplinkDownSince)} (${state})`);
    }
  }

  #disk(belowMb: number | null): void {
    const key = 'disk_low';
    const free = this.#d.freeBytes();
    if (free === null) return;
    const mb = Math.floor(free / 1_048_576);
    if (belowMb !== null && mb < belowMb && this.book.raise(key, this.#d.clock.now())) {
      this.#emit('raised', key, { free_mb: mb }, `only ${mb} MB free on the disk holding the database (alert below ${belowMb} MB)`);
    } else if ((belowMb === null || mb >= belowMb * 1.1) && this.book.clear(key)) {
      this.#emit('cleared', key, { free_mb: mb }, `${mb} MB free on the disk holding the database again`);
    }
  }

  // ---- the message ------------------------------------------------------------------------

  #emit(state: 'raised' | 'cleared', key: string, facts: Record<string, unknown>, what: string): void {
    const now = this.#d.clock.now();
    if (!this.book.take(now, this.#d.limits().max_per_hour)) {
      this.#d.log.warn('alert_suppressed', { key, state, note: 'bridge.alerts.max_per_hour reached' });
      return;
    }
    const source = key.split(':')[0];
    const text = `${this.#d.bridgeName()}: ${state === 'cleared' ? 'cleared: ' : ''}${what}`;
    this.#d.log.info('alert', { key, state, text });
    try {
      this.#d.send({
        direction: 'outbound', interfaceId: null, from: ALERT_SENDER, to: 'operator', channel: null, kind: 'text', text, payload: null,
        meta: { alert: { source, key, state, ...facts } },
      });
    } catch (error) {
      this.#d.log.error('alert_not_stored', { key, error: (error as Error).message });
    }
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const label = (n: { node_id: string; long_name: string | null }) => (n.long_name ? `${n.long_name} (${n.node_id})` : n.node_id);

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m < 1 ? `${Math.round(ms / 1000)} s` : m < 120 ? `${m} min` : `${Math.round(m / 60)} h`;
}
