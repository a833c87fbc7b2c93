import type { EventStream } from '../../lib/events.ts';
import type { MetricsRegistry } from '../../lib/metrics.ts';
import { DELIVERY_STATES, type DeliveryStore } from '../deliveries/store.ts';
import type { RouterEvent } from './events.ts';

// The router's Prometheus metrics (docs/api.md, "Metrics"): counters follow the event stream,
// gauges read the database at scrape time.

export function routerMetrics(metrics: MetricsRegistry, events: EventStream<RouterEvent>, deliveries: DeliveryStore): void {
  const messages = metrics.counter('fieldbridge_messages_total', 'Messages that entered the router, by direction and the action decided.');
  const bearerErrors = metrics.counter('fieldbridge_bearer_errors_total', 'Failed send attempts, by interface.');
  events.subscribe((event) => {
    if (event.type === 'message') messages.inc({ direction: event.message.direction, action: event.message.action ?? 'none' });
    else if (event.type === 'delivery' && event.failedAttempt) bearerErrors.inc({ interface: event.delivery.interface_id });
  });
  metrics.gauge('fieldbridge_deliveries', 'Deliveries by state.', () => {
    const counts = deliveries.countByState();
    return DELIVERY_STATES.map((state) => ({ labels: { state }, value: counts[state] ?? 0 }));
  });
  metrics.gauge('fieldbridge_queue_depth', 'Deliveries waiting per interface.', () =>
    deliveries.countByInterfaceWaiting().map((r) => ({ labels: { interface: r.interface_id }, value: r.n })),
  );
}
