import { z } from 'zod';

// Settings of an `sms` interface (docs/sms.md, "Settings").

// The marker a read shows for a stored secret; writing it back keeps the stored PIN
// (bridge/interfaces/secrets.ts). Spelled out here: bearers/ imports nothing from bridge/.
const REDACTED = '<redacted>';
const int = (what: string, min: number, max: number) =>
  z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` })
    .min(min, { error: `${what} must be ${min} to ${max}` }).max(max, { error: `${what} must be ${min} to ${max}` });

export const SmsSettings = z
  .strictObject({
    pin: z.union([z.string().regex(/^[0-9]{4,8}$/, 'pin must be 4 to 8 digits'), z.literal(REDACTED)]).nullable().default(null)
      .describe('SIM PIN, sent only when the SIM asks for it. A secret: shown as "<redacted>", never logged; a wrong PIN is never sent twice'),
    smsc: z.string().regex(/^\+[1-9][0-9]{3,14}$/, 'smsc must be an international number, e.g. +491710760000').nullable().default(null)
      .describe('SMS centre number; null = the one stored on the SIM'),
    encoding: z.enum(['auto', 'gsm7', 'ucs2'], { error: 'encoding must be auto, gsm7 or ucs2' }).default('auto')
      .describe('auto: GSM 7-bit when every character fits, else UCS-2'),
    max_parts: int('max_parts', 1, 255).default(6)
      .describe('Most SMS one message may take; longer fails for good unless a transform shortens it'),
    delivery_reports: z.boolean().default(false)
      .describe('Ask for status reports: a delivery is delivered only when every part\'s report says so'),
    report_timeout_s: int('report_timeout_s', 10, 7 * 86_400).default(3600)
      .describe('With delivery_reports: how long to wait for the reports; none in time is a retryable failure'),
    poll_s: int('poll_s', 5, 86_400).default(300)
      .describe('How often stored messages are listed (modems do drop new-message indications)'),
    reassembly_timeout_s: int('reassembly_timeout_s', 60, 7 * 86_400).default(3600)
      .describe('Parts of a long message still incomplete after this long are stored as they are (meta.incomplete)'),
    parts_per_day: int('parts_per_day', 1, 1_000_000).nullable().default(null)
      .describe('Most SMS parts sent per day (UTC); when spent, deliveries wait for the next day. null = no limit'),
    default_country_code: z.string().regex(/^[1-9][0-9]{0,2}$/, 'default_country_code must be 1 to 3 digits, e.g. 49').nullable().default(null)
      .describe('Country code that national numbers (leading 0) are completed with'),
  })
  .describe('Settings of an sms interface');
export type SmsSettings = z.infer<typeof SmsSettings>;

export const SMS_SECRET_SETTINGS = ['pin'] as const;
