import type { Counter, Histogram, MetricsRegistry } from '../lib/metrics.ts';

/** The HTTP metrics every server (bridge and hub) exports. */
export interface HttpMetrics {
  requests: Counter;
  duration: Histogram;
}

export function httpMetrics(registry: MetricsRegistry, prefix: string): HttpMetrics {
  return {
    requests: registry.counter(`${prefix}_http_requests_total`, 'HTTP requests answered, by method, route template and status.'),
    duration: registry.histogram(
      `${prefix}_http_request_duration_seconds`,
      'HTTP request latency from first byte to the last byte of the answer, by route template.',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
  };
}
