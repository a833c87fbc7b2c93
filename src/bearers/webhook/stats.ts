import { z } from 'zod';
import type { StatsView } from '../driver-module.ts';
import { counted as count } from '../shared/stats-fields.ts';
import { readHooks } from './hooks.ts';

// What a webhook interface reports (GET /api/interfaces/{id}/stats; docs/webhooks.md, "Health").

const WebhookStats = z.object({
  sent: count('Requests answered 2xx (delivered)'),
  failed: count('Requests that did not deliver'),
  retried: count('Of those, answered 429 or 5xx, not answered in time, or not reached: the delivery retries'),
  refused: count('Of those, answered with another status: the delivery is dead'),
  heard: count('Messages posted to this interface\'s hooks'),
  last_status: z.number().int().nullable().describe('HTTP status of the last answer; null until one came'),
  last_answer_at: z.string().nullable().describe('When the last answer came'),
  hooks: count('Inbound hooks on this interface (kept across restarts)'),
});

const ZERO = { sent: 0, failed: 0, retried: 0, refused: 0, heard: 0, last_status: null, last_answer_at: null };

export const webhookStats: StatsView<z.infer<typeof WebhookStats>> = {
  schema: WebhookStats,
  read: (raw, _settings, state) => WebhookStats.parse({
    ...ZERO,
    ...Object.fromEntries(Object.entries(raw).filter(([k]) => k in ZERO)),
    hooks: state ? readHooks(state).length : 0,
  }),
};
