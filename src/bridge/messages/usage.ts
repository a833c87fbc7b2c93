import type { DatabaseSync } from 'node:sqlite';
import { DRIVERS } from '../../bearers/drivers.ts';
import { afterCommit } from '../../db/sqlite.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import type { EventStream } from '../../lib/events.ts';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import type { Clock } from '../../lib/clock.ts';
import { applyTransforms, type TransformStep } from '../engine/transforms.ts';
import { estimateDelivery } from '../preview/estimate.ts';
import type { RouterEvent } from '../engine/events.ts';
import type { DeliveryRow, InterfaceRow } from '../engine/rows.ts';

// What was sent, per interface and UTC day (docs/api.md 4.6 GET /api/messages/stats `usage`,
// and /metrics): deliveries, frames and bytes handed to the bearer, and what a kind that bills
// spent in its unit (its driver module's `usageUnit`), one row per unit in usage_daily_units.
// Counted when a delivery becomes delivered, inside the transaction that writes that state (the
// event is emitted there), so the count exists exactly when the delivered state does, with no
// commit of its own; the /metrics counters after that commit. The frames are the delivery after
// its interface's outbound transforms, as the dispatcher sent it; the units are measured by the
// drivers' own codecs (the estimate the preview uses).

export interface UsageCounts {
  deliveries: number;
  frames: number;
  bytes: number;
  /** What the delivery cost in its kind's billing unit; null for a kind without one. */
  cost: { unit: string; amount: number } | null;
}

export interface UsageRow {
  interface_id: string;
  day: string;
  deliveries: number;
  frames: number;
  bytes: number;
  /** Amount spent per billing unit ({} for a kind without one). */
  units: Record<string, number>;
}

export class UsageStore {
  readonly #db: StatementCache;
  readonly #raw: DatabaseSync;
  constructor(db: DatabaseSync) {
    this.#db = new StatementCache(db);
    this.#raw = db;
  }
  /** Runs `fn` once the transaction the row was written in commits (at once outside one). */
  afterCommit(fn: () => void): void {
    afterCommit(this.#raw, fn);
  }
  add(interfaceId: string, day: string, c: UsageCounts): void {
    this.#db
      .prepare(
        'INSERT INTO usage_daily (interface_id, day, deliveries, frames, bytes) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT (interface_id, day) DO UPDATE SET deliveries = deliveries + excluded.deliveries, frames = frames + excluded.frames, bytes = bytes + excluded.bytes',
      )
      .run(interfaceId, day, c.deliveries, c.frames, c.bytes);
    if (!c.cost) return;
    this.#db
      .prepare('INSERT INTO usage_daily_units (interface_id, day, unit, amount) VALUES (?, ?, ?, ?) ON CONFLICT (interface_id, day, unit) DO UPDATE SET amount = amount + excluded.amount')
      .run(interfaceId, day, c.cost.unit, c.cost.amount);
  }
  /** Retention: days before `day` (YYYY-MM-DD, UTC) go. */
  deleteBefore(day: string): number {
    this.#db.prepare('DELETE FROM usage_daily_units WHERE day < ?').run(day);
    return Number(this.#db.prepare('DELETE FROM usage_daily WHERE day < ?').run(day).changes);
  }
  /** Newest day first, then by interface id. */
  list(): UsageRow[] {
    const rows = this.#db.prepare('SELECT interface_id, day, deliveries, frames, bytes FROM usage_daily ORDER BY day DESC, interface_id').all() as unknown as Omit<UsageRow, 'units'>[];
    const units = this.#db.prepare('SELECT interface_id, day, unit, amount FROM usage_daily_units').all() as unknown as Array<{ interface_id: string; day: string; unit: string; amount: number }>;
    const byDay = new Map<string, Record<string, number>>();
    for (const u of units) {
      const key = `${u.interface_id}\n${u.day}`;
      byDay.set(key, { ...byDay.get(key), [u.unit]: u.amount });
    }
    return rows.map((r) => ({ ...r, units: byDay.get(`${r.interface_id}\n${r.day}`) ?? {} }));
  }
}

/** What one delivered delivery put on the air, or null when its transforms drop it now. */
export function usageOf(d: DeliveryRow, row: InterfaceRow, clock: Clock): UsageCounts | null {
  const t = applyTransforms(row.transforms.outbound as TransformStep[], { text: d.text, payload: d.payload, from: d.from, to: d.to, interface: row.name, channel: d.channel });
  if (t.kind === 'dropped') return null;
  const frames = t.outputs.map((p) => ({ to: p.to, kind: d.kind, text: p.text, payload: p.payload ?? Buffer.from(p.text ?? '', 'utf8') }));
  const e = estimateDelivery(row.kind, frames, { settings: row.settings, stats: {}, state: { get: () => null }, runningMtu: undefined, clock });
  return { deliveries: 1, frames: frames.length, bytes: e.frames.reduce((n, f) => n + f.bytes, 0), cost: e.cost };
}

/** Counts every delivery that becomes delivered, in the database and in /metrics. */
export function followUsage(events: EventStream<RouterEvent>, store: UsageStore, interfaces: { find(id: string): InterfaceRow | undefined }, metrics: MetricsRegistry, clock: Clock): void {
  const frames = metrics.counter('fieldbridge_sent_frames_total', 'Frames handed to the bearer by delivered deliveries (after outbound transforms), by interface.');
  const bytes = metrics.counter('fieldbridge_sent_bytes_total', 'Bytes of those frames, by interface.');
  // One counter per billing unit a kind declares, registered before any is counted.
  const spent = new Map(DRIVERS.flatMap((d) => (d.usageUnit ? [[d.usageUnit.unit, metrics.counter(d.usageUnit.metric.name, d.usageUnit.metric.help)] as const] : [])));
  events.subscribe((event) => {
    if (event.type !== 'delivery' || event.delivery.state !== 'delivered') return;
    const d = event.delivery;
    const row = interfaces.find(d.interface_id);
    if (!row) return;
    const c = usageOf(d, row, clock);
    if (!c) return;
    const labels = { interface: row.name, interface_id: row.id };
    store.add(d.interface_id, (d.finished_at ?? d.updated_at).slice(0, 10), c);
    // The row rides the transaction; the in-memory counters wait for its commit, so a write
    // rolled back and replayed (the write-behind's) is counted once.
    store.afterCommit(() => {
      frames.inc(labels, c.frames);
      bytes.inc(labels, c.bytes);
      if (c.cost) spent.get(c.cost.unit)?.inc(labels, c.cost.amount);
    });
  });
}
