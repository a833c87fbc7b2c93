import { z } from 'zod';
import { toGsm7 } from '../../bearers/shared/codec/gsm7.ts';
import { checkSafeRegex, compileSafeRegex, SAFE_REGEX_MAX_LENGTH } from '../../lib/safe-regex.ts';

// Transform pipelines (docs/design.md section 6): ordered steps per interface and direction that
// reshape a message for the bearer behind the interface (an SMS modem wants GSM-7 text in
// 160-character parts, a satellite modem wants few bytes). Each step is pure: one message in,
// zero (dropped), one or several (split) messages out. Steps are validated when an interface
// is written, so a bad step is a 400 naming the field, never a surprise at 3 a.m.
//
// What a step works on, the message's "content": its text when text is not null, else its
// payload bytes. Text steps (prefix, strip_non_gsm7, drop_if) leave a message without text
// untouched. When a step rewrites text, payload is set to null so stale bytes never travel
// beside new text.

const TRANSFORM_TYPES = ['truncate', 'prefix', 'split', 'strip_non_gsm7', 'to_base64', 'from_base64', 'drop_if'] as const;
export const PREFIX_PLACEHOLDERS = ['from', 'to', 'interface', 'channel'] as const;
/** The numbering "(255/255) " takes 10 bytes and the longest UTF-8 character 4. */
export const SPLIT_MIN_BYTES = 16;
/** Concatenated-SMS reference numbers count parts in one byte (3GPP TS 23.040 9.2.3.24.1). */
export const SPLIT_MAX_PARTS = 255;
const MAX_STEPS = 32;

const maxBytes = (step: string, min: number) =>
  z
    .number({ error: `${step}.max_bytes must be a whole number of bytes` })
    .int({ error: `${step}.max_bytes must be a whole number of bytes` })
    .min(min, { error: `${step}.max_bytes must be at least ${min}` })
    .max(65535, { error: `${step}.max_bytes must be at most 65535` });

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** Placeholders in a prefix that are not one of PREFIX_PLACEHOLDERS. */
export function unknownPlaceholders(text: string): string[] {
  const known: readonly string[] = PREFIX_PLACEHOLDERS;
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]).filter((name) => !known.includes(name));
}

const TruncateStep = z
  .strictObject({ type: z.literal('truncate'), max_bytes: maxBytes('truncate', 1) })
  .describe('Cuts the text (at a character boundary, never inside a UTF-8 sequence) or the payload to max_bytes.');

const PrefixStep = z
  .strictObject({
    type: z.literal('prefix'),
    text: z
      .string({ error: 'prefix.text must be a string' })
      .min(1, { error: 'prefix.text must not be empty' })
      .max(200, { error: 'prefix.text must be at most 200 characters' })
      .superRefine((text, ctx) => {
        const unknown = unknownPlaceholders(text);
        if (unknown.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `prefix.text has unknown placeholder(s) ${unknown.map((u) => `{${u}}`).join(', ')}; known: ${PREFIX_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
          });
        }
      }),
  })
  .describe('Puts text in front of the message; {from}, {to}, {interface} and {channel} are replaced (a null channel by nothing).');

const SplitStep = z
  .strictObject({ type: z.literal('split'), max_bytes: maxBytes('split', SPLIT_MIN_BYTES) })
  .describe(`Cuts a longer message into parts of at most max_bytes each, numbering included: "(1/3) ...". At most ${SPLIT_MAX_PARTS} parts, else the message is dropped.`);

const StripNonGsm7Step = z
  .strictObject({ type: z.literal('strip_non_gsm7') })
  .describe('Keeps the GSM 03.38 basic set and extension table; folds typographic quotes, dashes and accents to GSM; replaces anything else by "?".');

const ToBase64Step = z
  .strictObject({ type: z.literal('to_base64') })
  .describe('Encodes the content (text as UTF-8, or the payload) as base64 text.');

const FromBase64Step = z
  .strictObject({ type: z.literal('from_base64') })
  .describe('Decodes base64 text into the payload; a message that is not valid base64 is dropped with the reason.');

const DropIfStep = z
  .strictObject({
    type: z.literal('drop_if'),
    regex: z
      .string({ error: 'drop_if.regex must be a string' })
      .min(1, { error: 'drop_if.regex must not be empty' })
      .max(SAFE_REGEX_MAX_LENGTH, {
        error: `drop_if.regex must be at most ${SAFE_REGEX_MAX_LENGTH} characters`,
      })
      .superRefine((pattern, ctx) => {
        const problem = checkSafeRegex(pattern);
        if (problem) ctx.addIssue({ code: 'custom', message: `drop_if.regex ${problem}` });
      }),
  })
  .describe('Drops the message when its text matches the regular expression (JavaScript syntax on the linear-time engine: case-sensitive, no backreferences or lookahead).');

export const TransformStep = z.discriminatedUnion(
  'type',
  [TruncateStep, PrefixStep, SplitStep, StripNonGsm7Step, ToBase64Step, FromBase64Step, DropIfStep],
  { error: `type must be one of ${TRANSFORM_TYPES.join(', ')}` },
);
export type TransformStep = z.infer<typeof TransformStep>;

const steps = (direction: string) =>
  z
    .array(TransformStep, { error: `${direction} must be a list of transform steps` })
    .max(MAX_STEPS, { error: `${direction} may hold at most ${MAX_STEPS} steps` })
    .default([]);

export const TransformPipeline = z.strictObject({
  inbound: steps('inbound').describe('Applied to messages received on the interface, before the rules.'),
  outbound: steps('outbound').describe('Applied by the dispatcher to each delivery on the interface, before the bearer.'),
});
export type TransformPipeline = z.infer<typeof TransformPipeline>;

export interface TransformInput {
  text: string | null;
  payload: Uint8Array | null;
  from: string;
  to: string;
  /** The interface's name (what {interface} renders). */
  interface: string;
  channel: number | null;
}

export type TransformResult =
  | { kind: 'ok'; outputs: TransformInput[] }
  /** step is the 0-based index of the step that dropped the message. */
  | { kind: 'dropped'; reason: string; step: number };

type StepOutcome = { ok: TransformInput[] } | { dropped: string };

/**
 * Runs the steps in order. A split multiplies the messages the later steps see; if any step
 * drops any of them, the whole message is dropped (half a message is worse than none).
 */
export function applyTransforms(steps: readonly TransformStep[], input: TransformInput): TransformResult {
  let current: TransformInput[] = [input];
  for (let index = 0; index < steps.length; index++) {
    const next: TransformInput[] = [];
    for (const message of current) {
      const outcome = applyStep(steps[index], message);
      if ('dropped' in outcome) return { kind: 'dropped', reason: outcome.dropped, step: index };
      next.push(...outcome.ok);
    }
    current = next;
  }
  return { kind: 'ok', outputs: current };
}

function applyStep(step: TransformStep, m: TransformInput): StepOutcome {
  switch (step.type) {
    case 'truncate':
      if (m.text !== null) return { ok: [withText(m, truncateUtf8(m.text, step.max_bytes))] };
      if (m.payload !== null && m.payload.length > step.max_bytes) return { ok: [{ ...m, payload: m.payload.slice(0, step.max_bytes) }] };
      return { ok: [m] };
    case 'prefix':
      return { ok: [m.text === null ? m : withText(m, renderPrefix(step.text, m) + m.text)] };
    case 'split':
      return splitMessage(m, step.max_bytes);
    case 'strip_non_gsm7':
      return { ok: [m.text === null ? m : withText(m, toGsm7(m.text))] };
    case 'to_base64': {
      const bytes = m.text !== null ? Buffer.from(m.text, 'utf8') : m.payload;
      return { ok: [bytes === null ? m : { ...m, text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'), payload: null }] };
    }
    case 'from_base64': {
      const encoded = m.text !== null ? m.text : m.payload !== null ? Buffer.from(m.payload).toString('latin1') : null;
      if (encoded === null) return { ok: [m] };
      const decoded = decodeBase64Strict(encoded);
      if (typeof decoded === 'string') return { dropped: `from_base64: ${decoded}` };
      return { ok: [{ ...m, text: null, payload: decoded }] };
    }
    case 'drop_if':
      if (m.text !== null && compileSafeRegex(step.regex).test(m.text)) return { dropped: `drop_if: text matches /${step.regex}/` };
      return { ok: [m] };
  }
}

function withText(m: TransformInput, text: string): TransformInput {
  return text === m.text ? m : { ...m, text, payload: null };
}

function renderPrefix(template: string, m: TransformInput): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    if (name === 'from') return m.from;
    if (name === 'to') return m.to;
    if (name === 'interface') return m.interface;
    if (name === 'channel') return m.channel === null ? '' : String(m.channel);
    return whole; // unreachable after validation
  });
}

// ---- UTF-8 helpers ----

/** Bytes one code point takes in UTF-8 (a lone surrogate is written as U+FFFD: 3 bytes). */
function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

export function utf8ByteLength(text: string): number {
  let n = 0;
  for (const ch of text) n += utf8Length(ch.codePointAt(0)!);
  return n;
}

/** The longest prefix of text that fits in maxBytes of UTF-8, cut between code points. */
export function truncateUtf8(text: string, maxBytes: number): string {
  let used = 0;
  let end = 0;
  for (const ch of text) {
    const size = utf8Length(ch.codePointAt(0)!);
    if (used + size > maxBytes) return text.slice(0, end);
    used += size;
    end += ch.length;
  }
  return text;
}

// ---- split ----

const digits = (n: number) => String(n).length;

function splitMessage(m: TransformInput, maxBytes: number): StepOutcome {
  const isText = m.text !== null;
  const size = isText ? utf8ByteLength(m.text!) : m.payload !== null ? m.payload.length : 0;
  if (size <= maxBytes) return { ok: [m] };
  // The width of the total in "(i/N) " depends on N: assume 1 digit, and widen until the
  // count of parts has as many digits as assumed.
  for (let width = 1; width <= digits(SPLIT_MAX_PARTS); width++) {
    const budget = (i: number) => maxBytes - (4 + digits(i) + width);
    const parts = isText ? splitText(m.text!, budget) : splitBytes(m.payload!, budget);
    if (parts === null) break; // more than SPLIT_MAX_PARTS
    if (digits(parts.length) > width) continue;
    const n = parts.length;
    return {
      ok: parts.map((part, i) => {
        const label = `(${i + 1}/${n}) `;
        if (typeof part === 'string') return { ...m, text: label + part, payload: null };
        return { ...m, payload: concatBytes(Buffer.from(label, 'latin1'), part) };
      }),
    };
  }
  return { dropped: `split: ${size} bytes need more than ${SPLIT_MAX_PARTS} parts of ${maxBytes} bytes` };
}

/** Text cut into parts fitting budget(i) bytes, preferring a space in the second half of a
 *  part; null when that takes more than SPLIT_MAX_PARTS parts. */
function splitText(text: string, budget: (i: number) => number): string[] | null {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    if (parts.length === SPLIT_MAX_PARTS) return null;
    const room = budget(parts.length + 1);
    let chunk = truncateUtf8(rest, room);
    let consumed = chunk.length;
    if (chunk.length < rest.length) {
      const space = chunk.lastIndexOf(' ');
      if (space > chunk.length / 2) {
        chunk = chunk.slice(0, space);
        consumed = space + 1; // the space itself is not sent
      }
    }
    parts.push(chunk);
    rest = rest.slice(consumed);
  }
  return parts;
}

function splitBytes(bytes: Uint8Array, budget: (i: number) => number): Uint8Array[] | null {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    if (parts.length === SPLIT_MAX_PARTS) return null;
    const room = budget(parts.length + 1);
    parts.push(bytes.slice(at, at + room));
    at += room;
  }
  return parts;
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

// ---- base64 ----

const BASE64 = /^[A-Za-z0-9+/]*$/;

/** Standard base64 (RFC 4648 section 4); whitespace (line wrapping) ignored, padding
 *  optional. Returns the bytes, or why the text is not base64. */
export function decodeBase64Strict(encoded: string): Uint8Array | string {
  const compact = encoded.replace(/[ \t\r\n]/g, '');
  const body = compact.replace(/={1,2}$/, '');
  if (!BASE64.test(body)) {
    const bad = [...body].findIndex((c) => !/[A-Za-z0-9+/]/.test(c));
    return `text is not valid base64 (unexpected ${JSON.stringify(body[bad])} at position ${bad})`;
  }
  if (body.length % 4 === 1) return 'text is not valid base64 (its length leaves a dangling character)';
  if (compact.length !== body.length && compact.length % 4 !== 0) return 'text is not valid base64 (wrong padding)';
  return new Uint8Array(Buffer.from(body, 'base64'));
}
