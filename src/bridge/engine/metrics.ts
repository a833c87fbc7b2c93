import type { EventStream } from '../../lib/events.ts';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import { precedenceName } from './precedence.ts';
import { type DeliveryStore } from './delivery-store.ts';
import type { InterfaceStore } from './interface-store.ts';
import type { RouterEvent } from './events.ts';
import { DELIVERY_STATES } from './rows.ts';

// The router's Prometheus metrics (docs/api.md, "Metrics"): counters follow the event stream,
// gauges read the database at scrape time. Series of one interface carry its name as
// `interface` (what the operator wrote and queries by) and its id as `interface_id` (stable
// across a rename; the name of an interface deleted since is its id).

export function routerMetrics(metrics: MetricsRegistry, events: EventStream<RouterEvent>, deliveries: DeliveryStore, interfaces: Pick<InterfaceStore, 'find' | 'list'>): void {
  const labelsOf = (id: string) => ({ interface: interfaces.find(id)?.name ?? id, interface_id: id });
  const messages = metrics.counter('fieldbridge_messages_total', 'Messages that entered the router, by direction and the action decided.');
  const bearerErrors = metrics.counter('fieldbridge_bearer_errors_total', 'Failed send attempts, by interface.');
  events.subscribe((event) => {
    if (event.type === 'message') messages.inc({ direction: event.message.direction, action: event.message.action ?? 'none' });
    else if (event.type === 'delivery' && event.failedAttempt) bearerErrors.inc(labelsOf(event.delivery.interface_id));
  });
  metrics.gauge('fieldbridge_deliveries', 'Deliveries by state.', () => {
    const counts = deliveries.countByState();
    return DELIVERY_STATES.map((state) => ({ labels: { state }, value: counts[state] ?? 0 }));
  });
  // Every interface has a sample, 0 for an empty queue: a missing series reads as "no data",
  // and an alert on the depth would not see an interface whose queue was never used.
  metrics.gauge('fieldbridge_queue_depth', 'Deliveries waiting per interface.', () => {
    const waiting = new Map(deliveries.countByInterfaceWaiting().map((r) => [r.interface_id, r.n]));
    const ids = new Set([...interfaces.list().map((i) => i.id), ...waiting.keys()]);
    return [...ids].map((id) => ({ labels: labelsOf(id), value: waiting.get(id) ?? 0 }));
  });
  // docs/routing.md, "Bounded queues": depth by precedence (held ones have state held).
  metrics.gauge('fieldbridge_queue_by_precedence', 'Deliveries waiting per interface, by precedence and state (pending, held, retrying, sending).', () =>
    deliveries.queueByPrecedence().map((r) => ({ labels: { ...labelsOf(r.interface_id), precedence: precedenceName(r.precedence), state: r.state }, value: r.n })),
  );
  const evictions = metrics.counter('fieldbridge_evictions_total', 'Deliveries evicted from a full queue to the dead letters, by interface.');
  events.subscribe((event) => {
    if (event.type === 'delivery' && event.delivery.state === 'dead' && event.delivery.last_error?.startsWith('evicted:')) evictions.inc(labelsOf(event.delivery.interface_id));
  });
  // engine/node-identity.ts: a node seen under a new id with its key, or a number two keys claim.
  const nodeChanges = metrics.counter('fieldbridge_node_identity_changes_total', 'Node identity changes, by interface and change: renumbered (a known public key under a new node id) or key_conflict (a second key claiming a node id).');
  events.subscribe((event) => {
    if (event.type === 'node') nodeChanges.inc({ ...labelsOf(event.interfaceId), change: event.change.type });
  });
}

/** What waits for another process's database lock (engine/held-frames.ts,
 *  db/busy.ts DeferredWrites): 0 unless the lock is held. */
export function lockWaitMetrics(metrics: MetricsRegistry, core: { held: { waiting: number; counters: { held: number; overflow: number } }; deferred: { waiting: number; droppedTotal: number } }): void {
  metrics.gauge('fieldbridge_lock_waiting', 'Heard frames and writes (node reports, driver state) waiting in memory for another process\'s database lock.', () => [
    { labels: { what: 'frames' }, value: core.held.waiting },
    { labels: { what: 'writes' }, value: core.deferred.waiting },
  ]);
  metrics.gauge('fieldbridge_lock_lost', 'Heard frames refused and writes dropped since start because too many waited for another process\'s database lock.', () => [
    { labels: { what: 'frames' }, value: core.held.counters.overflow },
    { labels: { what: 'writes' }, value: core.deferred.droppedTotal },
  ]);
}
