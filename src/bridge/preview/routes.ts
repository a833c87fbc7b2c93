import { z } from 'zod';
import { ADMIN, route, type Route } from '../../http/route.ts';
import type { InterfaceService } from '../interfaces/service.ts';
import { meshRxInput, refineSend, refineTtl, SEND_FIELDS, sendInput, SIMULATE_FIELDS } from '../messages/ingress.ts';
import type { PreviewService } from './service.ts';

// POST /api/messages/preview (docs/api.md 4.6, docs/routing.md "Preview"): one
// endpoint, `mode` saying which call is previewed: "send" takes the body of
// POST /api/messages/send, "mesh-rx" that of POST /api/messages/simulate-mesh-rx. `at` asks
// the rules at another time ("what happens at 03:00 on Sunday?").

/** Not audited: a preview changes nothing (app.ts leaves it out of the audit log). */
export const PREVIEW_PATH = '/api/messages/preview';

const At = z.iso.datetime({ offset: true, error: 'at must be an ISO 8601 time such as 2026-11-29T03:00:00Z (default: now)' }).optional()
  .describe('The time the rules and schedules are read at (default now); interface states and budgets are always as they are now');

const PreviewBody = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('send'), at: At, ...SEND_FIELDS }).superRefine(refineSend).superRefine(refineTtl),
  z.strictObject({ mode: z.literal('mesh-rx'), at: At, ...SIMULATE_FIELDS }),
], { error: 'mode must be "send" (the body of POST /api/messages/send) or "mesh-rx" (the body of POST /api/messages/simulate-mesh-rx)' });

const Frame = z.object({
  text: z.string().nullable().describe('The frame\'s text after the outbound transforms (null: binary)'),
  bytes: z.number().int().describe('Bytes the bearer is handed (an Iridium frame with its RockBLOCK prefix)'),
  fits: z.boolean().describe('Whether the bearer would take it (its MTU, an SMS interface\'s max_parts, a valid address)'),
  error: z.string().nullable().describe('What the bearer would answer when it does not fit'),
  encoding: z.string().nullable().optional().describe('SMS: gsm7, ucs2 or 8bit'),
  parts: z.number().int().nullable().optional().describe('SMS parts'),
  credits: z.number().int().optional().describe('Iridium credits (one per started 50 bytes)'),
});

const Delivery = z.object({
  interface_id: z.string(), interface: z.string(), kind: z.string().nullable(),
  state: z.enum(['connected', 'offline', 'disabled', 'unbound', 'no_driver', 'out_of_budget']),
  waiting_for: z.string().nullable().describe('Why the delivery would wait now (as a delivery\'s waiting_for); null: it could go at once'),
  to: z.string().describe('The address after {from}, {to}, @group and @contact are resolved'),
  address: z.string().describe('The address the bearer would use (an SMS number normalised to E.164)'),
  until_heard: z.boolean(),
  dropped_by_transform: z.string().nullable(),
  frames: z.array(Frame).describe('One per part after the outbound transforms'),
  mtu: z.number().int().nullable(),
  fits_mtu: z.boolean(),
  budget: z.object({ allows: z.boolean(), reason: z.string().nullable() }).describe('Whether the interface\'s day or month budget (parts_per_day, credits_per_day/month) would allow it now'),
  cost: z.object({ unit: z.string(), amount: z.number(), money: z.null() }).nullable().describe('What it would spend in the bearer\'s billing unit (sms_parts, iridium_credits); null for a bearer without one'),
});

const RuleTrace = z.object({
  rule_id: z.string(), name: z.string(), priority: z.number().int(), enabled: z.boolean(),
  filters: z.object({ matched: z.boolean(), matched_filters: z.array(z.string()), failed: z.object({ filter: z.string(), reason: z.string() }).nullable() }),
  schedule: z.object({ active: z.boolean(), reason: z.string() }).nullable().describe('null: no schedule (always)'),
  outcome: z.enum(['decided', 'disabled', 'no_match', 'off_schedule', 'not_reached']),
});

const Part = z.object({
  message: z.object({
    direction: z.string(), interface_id: z.string().nullable(), interface: z.string().nullable(), from: z.string(), to: z.string(), channel: z.number().int().nullable(),
    kind: z.string(), text: z.string().nullable(), payload_b64: z.string().nullable(), size: z.number().int(),
  }).describe('The message after the inbound transforms'),
  dropped_by_inbound_transform: z.string().nullable(),
  rules: z.array(RuleTrace).describe('Every rule in evaluation order'),
  decision: z.object({ rule_id: z.string().nullable(), rule: z.string().nullable(), action: z.string(), reason: z.string(), precedence: z.string().nullable() }),
  deliveries: z.array(Delivery),
  fallback_lists: z.array(z.object({
    strategy: z.string(), keep_trying: z.boolean(),
    members: z.array(z.object({
      position: z.number().int(), interface_id: z.string(), interface: z.string(), to: z.string().nullable(),
      cannot_take: z.string().nullable(), would_start: z.boolean(), delivery: Delivery.nullable(),
    })),
  })),
  sender: z.object({
    address: z.string(), blocked: z.string().nullable().describe('Why the sender is blocked (the message would be dropped)'),
    over_limit: z.string().nullable().describe('Why the message is over a sender limit (it would be stored, not forwarded)'),
    limits: z.array(z.object({ kinds: z.array(z.string()), per_hour: z.number(), burst: z.number().int(), tokens: z.number().describe('Forwards left now, before this message') })),
  }).nullable().describe('The senders policy on a message heard on an interface (docs/senders.md); null for a send'),
});

export function previewRoutes(deps: { preview: PreviewService; interfaces: InterfaceService; now: () => number }): Route[] {
  const { preview, interfaces, now } = deps;
  return [
    route({
      method: 'POST', path: PREVIEW_PATH,
      summary: 'What the router would do with a send or a simulate-mesh-rx: the rules one by one, the decision, each delivery with its frames, budget and cost. Stores, sends and counts nothing',
      tags: ['messages'], roles: ADMIN,
      body: PreviewBody, bodyName: 'PreviewMessage',
      response: z.object({ mode: z.enum(['send', 'mesh-rx']), at: z.iso.datetime(), parts: z.array(Part).describe('One per message part after the inbound transforms (usually one)') }),
      responseName: 'MessagePreview',
      handler: ({ body }) => {
        const atMs = body.at !== undefined ? Date.parse(body.at) : now();
        const input = body.mode === 'send' ? sendInput(body) : meshRxInput(body, interfaces);
        return { mode: body.mode, at: new Date(atMs).toISOString(), parts: preview.preview(input, atMs) };
      },
    }),
  ];
}
