import type { DatabaseSync } from 'node:sqlite';
import { afterCommit } from '../../db/sqlite.ts';
import { StatementCache } from '../../db/statement-cache.ts';
import type { EventStream } from '../../lib/events.ts';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import type { Clock } from '../../lib/clock.ts';
import { applyTransforms, type TransformStep } from '../engine/transforms.ts';
import { estimateDelivery } from '../preview/estimate.ts';
import type { RouterEvent } from '../engine/events.ts';
import type { DeliveryRow, InterfaceRow } from '../engine/rows.ts';

// What was sent, per interface and UTC day (issue 17, "cost view"; docs/api.md 4.6
// GET /api/messages/stats `usage`, and /metrics): frames and bytes handed to the bearer, SMS
// parts and Iridium credits. Counted when a delivery becomes delivered, inside the transaction
// that writes that state (the event is emitted there), so the count exists exactly when the
// delivered state does, with no commit of its own; the /metrics counters after that commit. The frames are the delivery after its
// interface's outbound transforms, as the dispatcher sent it; parts and credits are measured by
// the drivers' own codecs (the estimate hooks the preview uses).

export interface UsageCounts {
  deliveries: number;
  frames: number;
  bytes: number;
  sms_parts: number;
  iridium_credits: number;
}

export interface UsageRow extends UsageCounts {
  interface_id: string;
  day: string;
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
        'INSERT INTO usage_daily (interface_id, day, deliveries, frames, bytes, sms_parts, iridium_credits) VALUES (?, ?, ?, ?, ?, ?, ?) ' +
          'ON CONFLICT (interface_id, day) DO UPDATE SET deliveries = deliveries + excluded.deliveries, frames = frames + excluded.frames, bytes = bytes + excluded.bytes, ' +
          'sms_parts = sms_parts + excluded.sms_parts, iridium_credits = iridium_credits + excluded.iridium_credits',
      )
      .run(interfaceId, day, c.deliveries, c.frames, c.bytes, c.sms_parts, c.iridium_credits);
  }
  /** Retention: days before `day` (YYYY-MM-DD, UTC) go. */
  deleteBefore(day: string): number {
    return Number(this.#db.prepare('DELETE FROM usage_daily WHERE day < ?').run(day).changes);
  }
  /** Newest day first, then by interface id. */
  list(): UsageRow[] {
    return this.#db.prepare('SELECT * FROM usage_daily ORDER BY day DESC, interface_id').all() as unknown as UsageRow[];
  }
}

/** What one delivered delivery put on the air, or null when its transforms drop it now. */
export function usageOf(d: DeliveryRow, row: InterfaceRow, clock: Clock): UsageCounts | null {
  const t = applyTransforms(row.transforms.outbound as TransformStep[], { text: d.text, payload: d.payload, from: d.from, to: d.to, interface: row.name, channel: d.channel });
  if (t.kind === 'dropped') return null;
  const frames = t.outputs.map((p) => ({ to: p.to, kind: d.kind, text: p.text, payload: p.payload ?? Buffer.from(p.text ?? '', 'utf8') }));
  const e = estimateDelivery(row.kind, frames, { settings: row.settings, stats: {}, state: { get: () => null }, runningMtu: undefined, clock });
  return {
    deliveries: 1,
    frames: frames.length,
    bytes: e.frames.reduce((n, f) => n + f.bytes, 0),
    sms_parts: row.kind === 'sms' ? e.frames.reduce((n, f) => n + (f.parts ?? 0), 0) : 0,
    iridium_credits: row.kind === 'iridium' ? e.frames.reduce((n, f) => n + (f.credits ?? 0), 0) : 0,
  };
}

/** Counts every delivery that becomes delivered, in the database and in /metrics. */
export function followUsage(events: EventStream<RouterEvent>, store: UsageStore, interfaces: { find(id: string): InterfaceRow | undefined }, metrics: MetricsRegistry, clock: Clock): void {
  const frames = metrics.counter('fieldbridge_sent_frames_total', 'Frames handed to the bearer by delivered deliveries (after outbound transforms), by interface.');
  const bytes = metrics.counter('fieldbridge_sent_bytes_total', 'Bytes of those frames, by interface.');
  const parts = metrics.counter('fieldbridge_sms_parts_total', 'SMS parts sent by delivered deliveries, by interface.');
  const credits = metrics.counter('fieldbridge_iridium_credits_total', 'Iridium credits of delivered deliveries (one per started 50 bytes), by interface.');
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
      if (row.kind === 'sms') parts.inc(labels, c.sms_parts);
      if (row.kind === 'iridium') credits.inc(labels, c.iridium_credits);
    });
  });
}
