import type { MetricsRegistry } from '../../lib/metrics.ts';
import type { InterfaceService } from './service.ts';

// What each interface's device reports (its driver's stats, GET /api/interfaces/{id}/stats),
// on /metrics: every number as one gauge sample, named by the field; a map of counts (failed
// attempts by reason) as one sample per key. Read at scrape time. Labelled like the router's
// series (engine/metrics.ts): `interface` is the name, `interface_id` the id.

export function interfaceMetrics(metrics: MetricsRegistry, interfaces: InterfaceService): void {
  metrics.gauge('fieldbridge_device_value', 'Numbers the interface\'s device and driver report (GET /api/interfaces/{id}/stats), by field name.', () => {
    const samples: Array<{ labels: Record<string, string>; value: number }> = [];
    for (const row of interfaces.list()) {
      const { stats } = interfaces.stats(row);
      for (const [name, value] of Object.entries(stats as Record<string, unknown>)) {
        if (typeof value === 'number' && Number.isFinite(value)) samples.push({ labels: { interface: row.name, interface_id: row.id, kind: row.kind, name }, value });
        else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          for (const [key, n] of Object.entries(value)) {
            if (typeof n === 'number' && Number.isFinite(n)) samples.push({ labels: { interface: row.name, interface_id: row.id, kind: row.kind, name: `${name}.${key}` }, value: n });
          }
        }
      }
    }
    return samples;
  });
}
