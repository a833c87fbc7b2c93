import { z } from 'zod';
import type { StatsView } from '../driver-module.ts';
import { counted as count } from '../shared/stats-fields.ts';

// What a TAK interface reports (GET /api/interfaces/{id}/stats, and health's `device`;
// docs/tak.md, "Health").

const Certificate = z.object({
  subject: z.string().describe('Subject of the client certificate'),
  not_after: z.string().describe('When it stops being valid; within a week the interface\'s last_error says so'),
  expires_in_days: z.number().int().describe('Whole days left (negative: expired)'),
}).nullable().describe('The tls:// client certificate, as read at the last connect; null for tcp:// and udp://');

const TakStats = z.object({
  positions_sent: count('Position events written'),
  positions_waiting: count('Nodes whose newest fix waits for its interval (min_interval_s) or for the link'),
  positions_waiting_replaced: count('Fixes replaced by a newer one of the same node before they went out (latest only)'),
  positions_older_dropped: count('Fixes older than the last one sent for their node, not sent'),
  positions_without_fix: count('Position messages without a fix, not sent'),
  chats_sent: count('GeoChat events written'),
  chats_heard: count('GeoChat messages heard from TAK users'),
  positions_heard: count('Position events heard from TAK users'),
  echoes_ignored: count('Own events heard back (by uid), not routed again'),
  other_events: count('Other well-formed events heard (pings, drawings, ...), ignored'),
  invalid_events: count('Events that were not well-formed or lacked what CoT requires'),
  oversized_bytes: count('Bytes dropped because no event in them ended within 64 KiB'),
  link: z.string().nullable().describe('The connection in use; null while down'),
  certificate: Certificate,
});

const ZERO = {
  positions_sent: 0, positions_waiting: 0, positions_waiting_replaced: 0, positions_older_dropped: 0, positions_without_fix: 0, chats_sent: 0,
  chats_heard: 0, positions_heard: 0, echoes_ignored: 0, other_events: 0, invalid_events: 0, oversized_bytes: 0, link: null,
};

export const takStats: StatsView<z.infer<typeof TakStats>> = {
  schema: TakStats,
  read: (raw, _settings, _state, clock) => {
    const c = raw.certificate as { subject: string; not_after: string } | null | undefined;
    const now = clock?.now() ?? Date.now();
    return TakStats.parse({
      ...ZERO,
      ...Object.fromEntries(Object.entries(raw).filter(([k]) => k in ZERO)),
      certificate: c ? { ...c, expires_in_days: Math.floor((Date.parse(c.not_after) - now) / 86_400_000) } : null,
    });
  },
};
