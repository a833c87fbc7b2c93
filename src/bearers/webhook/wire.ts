import { createHmac, timingSafeEqual } from 'node:crypto';
import type { OutboundFrame } from '../bearer.ts';

// What a webhook request carries (docs/protocols/webhook.md): the headers, the signature over
// the timestamp and the body, and the body itself (the JSON document or the operator's
// template). Pure: no I/O, no clock of its own.

export const HEADER = {
  signature: 'x-fieldbridge-signature',
  timestamp: 'x-fieldbridge-timestamp',
  delivery: 'x-fieldbridge-delivery',
  message: 'x-fieldbridge-message',
  attempt: 'x-fieldbridge-attempt',
  part: 'x-fieldbridge-part',
} as const;

/** A split delivery's part as the header and the template show it: "2/3". */
export function partLabel(frame: OutboundFrame): string | null {
  return frame.part ? `${frame.part.index}/${frame.part.count}` : null;
}

/** The signature header's value: `sha256=` and the lower-case hex HMAC-SHA256, keyed with the
 *  interface's secret, of the timestamp (decimal Unix seconds), a full stop, and the body bytes. */
export function sign(secret: string, timestampS: number, body: Uint8Array): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestampS}.`);
  mac.update(body);
  return `sha256=${mac.digest('hex')}`;
}

/** Whether `signature` is the one `sign` makes (a receiver's check, and the tests'). */
export function verify(secret: string, timestampS: number, body: Uint8Array, signature: string): boolean {
  const want = Buffer.from(sign(secret, timestampS, body));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
}

const isUtf8Text = (frame: OutboundFrame) => frame.text !== null;

/** The JSON document a webhook request carries: the message, its delivery and the decision. */
export function jsonBody(frame: OutboundFrame, sentAtIso: string): Record<string, unknown> {
  const o = frame.origin;
  return {
    type: 'delivery',
    sent_at: sentAtIso,
    delivery: { id: frame.deliveryId, to: frame.to, attempt: o?.attempt ?? 1, precedence: o?.precedence ?? null, ...(frame.part ? { part: frame.part } : {}) },
    message: {
      id: frame.messageId,
      from: o?.from ?? null,
      interface_id: o?.interfaceId ?? null,
      created_at: o?.createdAt ?? null,
      kind: frame.kind,
      channel: frame.channel,
      text: frame.text,
      payload_base64: isUtf8Text(frame) ? null : Buffer.from(frame.payload).toString('base64'),
    },
    decision: o?.decision ?? null,
  };
}

const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

/** The operator's template with its placeholders filled. Values are JSON-escaped (without
 *  their quotes) when the body is JSON, so a text with quotes keeps the document valid; an
 *  unknown placeholder is left as written. */
export function templateBody(template: string, frame: OutboundFrame, sentAtIso: string, json: boolean): string {
  const o = frame.origin;
  const values: Record<string, string> = {
    text: frame.text ?? '',
    from: o?.from ?? '',
    to: frame.to,
    kind: frame.kind,
    channel: frame.channel === null ? '' : String(frame.channel),
    message_id: frame.messageId,
    delivery_id: frame.deliveryId,
    attempt: String(o?.attempt ?? 1),
    part: partLabel(frame) ?? '',
    precedence: o?.precedence ?? '',
    rule_id: o?.decision?.rule_id ?? '',
    sent_at: sentAtIso,
  };
  return template.replace(PLACEHOLDER, (all, name: string) => {
    if (!(name in values)) return all;
    return json ? JSON.stringify(values[name]).slice(1, -1) : values[name];
  });
}

/** How much of an answer's body a dead letter quotes. */
export const EXCERPT_CHARS = 200;

/** The start of an answer's body, on one line, for a delivery's error. */
export function excerpt(body: Buffer): string {
  const text = body.subarray(0, EXCERPT_CHARS * 4).toString('utf8').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
}

/** When a Retry-After header (delta seconds or an HTTP date, RFC 9110 10.2.3) lets the next
 *  attempt go, in epoch ms; null when absent or unreadable. At most a day ahead. */
export function retryAfterMs(value: string | undefined, nowMs: number): number | null {
  if (value === undefined || value.trim() === '') return null;
  const v = value.trim();
  let at: number;
  if (/^\d+$/.test(v)) at = nowMs + Number(v) * 1000;
  else {
    // An HTTP date in any of its three forms has a month name and a time of day; Date.parse
    // alone would also take "-5" or "1.5" for a year.
    if (!/\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/.test(v) || !/\b\d{2}:\d{2}:\d{2}\b/.test(v)) return null;
    const date = Date.parse(v);
    if (Number.isNaN(date)) return null;
    at = date;
  }
  return Math.min(Math.max(at, nowMs), nowMs + 86_400_000);
}
