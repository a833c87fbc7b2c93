import { isAbsolute } from 'node:path';
import { z } from 'zod';

// Settings of a `webhook` interface (docs/webhooks.md, "Settings"). The destination address of
// each delivery is the URL; these say how every request of the interface is made and signed.

// The marker a read shows for a stored secret; writing it back keeps the stored one
// (bridge/interfaces/secrets.ts). Spelled out here: bearers/ imports nothing from bridge/.
const REDACTED = '<redacted>';
const int = (what: string, min: number, max: number) =>
  z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` })
    .min(min, { error: `${what} must be ${min} to ${max}` }).max(max, { error: `${what} must be ${min} to ${max}` });

/** Largest body a webhook interface sends by default (bytes of the frame's payload). */
export const WEBHOOK_DEFAULT_MTU = 65_536;

/** An http or https URL with a host, as destinations and base_url are written. */
export function httpUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : null;
}

export const WebhookSettings = z
  .strictObject({
    secret: z.union([z.string().min(16, 'secret must be at least 16 characters').max(256, 'secret must be at most 256 characters'), z.literal(REDACTED)], { error: 'secret must be a string of 16 to 256 characters' })
      .describe('The key every request is signed with (HMAC-SHA256, X-Fieldbridge-Signature). A secret: shown and exported as "<redacted>", never logged; writing "<redacted>" back keeps it'),
    base_url: z.string().refine((v) => httpUrl(v) !== null, { error: 'base_url must be an http:// or https:// URL' }).nullable().default(null)
      .describe('A destination that is not a whole URL (e.g. "sos") is resolved against this one; null: every destination must be an http:// or https:// URL'),
    template: z.string().min(1, 'template must not be empty').max(16_384, 'template must be at most 16384 characters').nullable().default(null)
      .describe('The body to send instead of the JSON document: {{text}}, {{from}}, {{to}}, {{kind}}, {{channel}}, {{message_id}}, {{delivery_id}}, {{attempt}}, {{part}} (2/3 for a split delivery), {{precedence}}, {{rule_id}}, {{sent_at}} are replaced (JSON-escaped when content_type is JSON)'),
    content_type: z.string().regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'content_type must be a media type, e.g. text/plain').max(128).default('application/json')
      .describe('Content-Type of a templated body (the JSON document is always application/json)'),
    timeout_s: int('timeout_s', 1, 120).default(10)
      .describe('Seconds to wait for the answer; none in time is a retryable failure'),
    ca_file: z.string().refine((v) => isAbsolute(v), { error: 'ca_file must be an absolute path' }).nullable().default(null)
      .describe('PEM file of certificate authorities trusted for https destinations, besides the system\'s (a private CA); verification is always on'),
    mtu: int('mtu', 1, 1_048_576).default(WEBHOOK_DEFAULT_MTU)
      .describe('Largest message payload sent, in bytes; a larger one is dead-lettered'),
  })
  .describe('Settings of a webhook interface');
export type WebhookSettings = z.infer<typeof WebhookSettings>;

export const WEBHOOK_SECRET_SETTINGS = ['secret'] as const;
