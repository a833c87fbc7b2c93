import { parseInfo } from '../shared/codec/at.ts';

// Short Burst Data facts a host needs beyond the AT line codec (bearers/shared/codec/at.ts reads the
// lines and AT+SBDRB's binary answer): the bytes written after AT+SBDWB's READY, the six fields
// of +SBDIX, the signal bars of +CSQ/+CSQF, what each MO status means, and what a session costs.
// Pure: no I/O, timers or logging (docs/style.md habit 1). Wire facts:
// docs/protocols/iridium-sbd.md section 3.

/** Largest MO message of a 9602/9603/RockBLOCK (iridium-sbd.md 3.6). */
export const SBD_MAX_MO_BYTES = 340;
/** Largest MT message of a 9602/9603/RockBLOCK (iridium-sbd.md 3.6). */
export const SBD_MAX_MT_BYTES = 270;
/** RockBLOCK bills one credit per 50 bytes or part of it (iridium-sbd.md 3.6). */
export const SBD_CREDIT_BYTES = 50;

/** What follows READY after `AT+SBDWB=<n>`: the n bytes, then the low 16 bits of their sum,
 *  high byte first (iridium-sbd.md 3.2: "hello" -> 68 65 6C 6C 6F 02 14). */
export function sbdWriteData(payload: Uint8Array): Uint8Array {
  if (payload.length < 1 || payload.length > SBD_MAX_MO_BYTES) {
    throw new RangeError(`an SBD MO message is 1 to ${SBD_MAX_MO_BYTES} bytes, got ${payload.length}`);
  }
  const out = new Uint8Array(payload.length + 2);
  out.set(payload);
  const sum = sbdChecksum(payload);
  out[payload.length] = sum >> 8;
  out[payload.length + 1] = sum & 0xff;
  return out;
}

/** AT+SBDWB's status line (iridium-sbd.md 3.2). Only `1` comes without OK after it. */
export const SBDWB_STATUS: Readonly<Record<string, string>> = {
  '0': 'written',
  '1': 'the modem timed out waiting for the bytes (60 s)',
  '2': 'the modem computed a different checksum',
  '3': 'the modem refused the size (1 to 340 bytes)',
};

export type MoOutcome = 'sent' | 'failed';

/** One MO status code (iridium-sbd.md 3.3): whether the MO message went, and why not. */
export interface MoStatus {
  code: number;
  outcome: MoOutcome;
  meaning: string;
}

// The ISU reference's table (iridium-sbd.md 3.3), in its own words where it names a code.
const MO_MEANINGS: Readonly<Record<number, string>> = {
  0: 'sent',
  1: 'sent; the queued MT message was too big to transfer',
  2: 'sent; the location update was refused',
  10: 'gateway: the call did not complete in time',
  11: 'gateway: the MO message queue is full',
  12: 'the MO message has too many segments',
  13: 'the session did not complete',
  14: 'invalid segment size',
  15: 'access denied by the gateway',
  16: 'the transceiver is locked and may not make SBD calls',
  17: 'the gateway is not responding (local session timeout)',
  18: 'the RF connection was lost',
  19: 'link failure (a protocol error ended the call)',
  32: 'no network service',
  35: 'the transceiver is busy',
};

/** Success is 0-4 (the ISU reference; 3-4 are reserved and count as success). Every other
 *  code is a failed session, retryable (issue: bad skies pass). */
export function moStatus(code: number): MoStatus {
  const outcome: MoOutcome = code >= 0 && code <= 4 ? 'sent' : 'failed';
  const meaning = MO_MEANINGS[code] ?? (outcome === 'sent' ? 'sent (reserved status)' : 'failed (reserved status)');
  return { code, outcome, meaning };
}

/** After which failures the sky wants a longer rest: no network service (32) and the 9523's
 *  "try later" (36) mean the modem will not get through for minutes (iridium-sbd.md 3.7). */
export function holdsForMinutes(code: number): boolean {
  return code === 32 || code === 36;
}

/** MT status of +SBDIX (iridium-sbd.md 3.3). */
export const MT_STATUS = { none: 0, received: 1, failed: 2 } as const;

export interface SbdixResult {
  moStatus: number;
  /** Wraps at 65535. */
  momsn: number;
  mtStatus: number;
  mtmsn: number;
  mtLength: number;
  mtQueued: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** `+SBDIX: <MO status>, <MOMSN>, <MT status>, <MTMSN>, <MT length>, <MT queued>`
 *  (iridium-sbd.md 3.3); the same for AT+SBDIXA. Each field must be a whole number in its
 *  range; anything else is an error naming the field, never a guess. */
export function parseSbdix(line: string): Parsed<SbdixResult> {
  const { name, args } = parseInfo(line);
  if (name !== '+SBDIX') return { ok: false, error: `expected a +SBDIX line, got ${show(line)}` };
  if (args.length !== 6) return { ok: false, error: `+SBDIX has 6 fields, got ${args.length} in ${show(line)}` };
  const fields = ['moStatus', 'momsn', 'mtStatus', 'mtmsn', 'mtLength', 'mtQueued'] as const;
  const max = { moStatus: 255, momsn: 65_535, mtStatus: 2, mtmsn: 65_535, mtLength: 1960, mtQueued: 65_535 };
  const value = {} as SbdixResult;
  for (const [i, field] of fields.entries()) {
    const v = args[i];
    if (typeof v !== 'number' || v < 0 || v > max[field]) {
      return { ok: false, error: `+SBDIX field ${i + 1} (${field}) must be 0 to ${max[field]}, got ${show(String(v))}` };
    }
    value[field] = v;
  }
  return { ok: true, value };
}

/** `+CSQ:<0-5>` or `+CSQF:<0-5>` (iridium-sbd.md 3.5): signal bars. */
export function parseSignal(line: string): Parsed<number> {
  const { name, args } = parseInfo(line);
  if (name !== '+CSQ' && name !== '+CSQF') return { ok: false, error: `expected +CSQ or +CSQF, got ${show(line)}` };
  const bars = args[0];
  if (args.length !== 1 || typeof bars !== 'number' || bars < 0 || bars > 5) return { ok: false, error: `signal must be 0 to 5 bars, got ${show(line)}` };
  return { ok: true, value: bars };
}

// ---- -MSSTM: the Iridium network's time (iridium-sbd.md 3.8) ----

/** One Iridium time era: the UTC instant its tick count starts from, and when the network
 *  began to broadcast it (a re-epoch happens months after the new epoch itself). */
export interface IridiumEra {
  name: string;
  epochMs: number;
  /** When the constellation switched its broadcast to this era. */
  fromMs: number;
}

/** The eras, oldest first (iridium-sbd.md 3.8). A count does not say which era it belongs
 *  to, so only the newest row decodes; a re-epoch after ERA3 needs a new row here. */
export const IRIDIUM_ERAS: readonly IridiumEra[] = [
  { name: 'ERA1', epochMs: Date.UTC(2007, 2, 8, 3, 50, 21), fromMs: Date.UTC(2007, 2, 8, 3, 50, 21) },
  { name: 'ERA2', epochMs: Date.UTC(2014, 4, 11, 14, 23, 55), fromMs: Date.UTC(2015, 2, 3, 18, 0, 0) },
  { name: 'ERA3', epochMs: Date.UTC(2025, 1, 14, 18, 14, 17), fromMs: Date.UTC(2026, 0, 14, 18, 8, 0) },
];

/** One tick of the Iridium system time: an L-band frame. */
export const MSSTM_TICK_MS = 90;

/** The -MSSTM count the network broadcasts at `ms`: ticks since the epoch of the era in force
 *  then (the first era before any began). What the simulator answers. */
export function msstmCount(ms: number, eras: readonly IridiumEra[] = IRIDIUM_ERAS): number {
  const era = eras.findLast((e) => ms >= e.fromMs) ?? eras[0];
  return Math.floor((ms - era.epochMs) / MSSTM_TICK_MS);
}

/** `-MSSTM: <hex>` (1 to 8 hex digits: the count of 90 ms frames since the era's epoch; the
 *  references differ on leading zeros) -> the count; `-MSSTM: no network service` -> null
 *  (the modem has not had the time from the network yet). Anything else is an error. */
export function parseMsstm(line: string): Parsed<number | null> {
  const m = /^\s*-MSSTM:\s*(.*?)\s*$/i.exec(line);
  if (!m) return { ok: false, error: `expected a -MSSTM line, got ${show(line)}` };
  if (/^no network service$/i.test(m[1])) return { ok: true, value: null };
  if (!/^[0-9a-fA-F]{1,8}$/.test(m[1])) return { ok: false, error: `-MSSTM must be 1 to 8 hex digits or "no network service", got ${show(m[1])}` };
  return { ok: true, value: parseInt(m[1], 16) };
}

/** The UTC time of a -MSSTM count, decoded in the newest era of `eras`. A count that decodes
 *  to before that era began to be broadcast cannot be one of its counts (it is an older era's,
 *  from a modem that kept counting since before the re-epoch, or a later era this table does
 *  not know): an error, never a guess, because the bridge's clock would take a wrong time
 *  that is ahead and never give it back. */
export function msstmTime(ticks: number, eras: readonly IridiumEra[] = IRIDIUM_ERAS): Parsed<{ ms: number; era: string }> {
  if (!Number.isInteger(ticks) || ticks < 0 || ticks > 0xffff_ffff) return { ok: false, error: `a -MSSTM count is 32 bits, got ${ticks}` };
  const era = eras[eras.length - 1];
  const ms = era.epochMs + ticks * MSSTM_TICK_MS;
  if (ms < era.fromMs) {
    return { ok: false, error: `-MSSTM count ${ticks.toString(16)} decodes to ${new Date(ms).toISOString()} in ${era.name}, before ${era.name} began (${new Date(era.fromMs).toISOString()}): not a count of the current era` };
  }
  return { ok: true, value: { ms, era: era.name } };
}

/** Credits a session costs as RockBLOCK bills it (iridium-sbd.md 3.6): one per 50 bytes of MO
 *  or part of it; an empty MO (a mailbox check) costs one. Failed sessions are not billed. */
export function sessionCredits(moBytes: number): number {
  return moBytes <= 0 ? 1 : Math.ceil(moBytes / SBD_CREDIT_BYTES);
}

// RockBLOCK to RockBLOCK (iridium-sbd.md 3.6): the payload starts with `RB` and the
// destination's serial number as 7 ASCII digits, zero-padded.
const ROCKBLOCK_ADDRESS = /^RB([0-9]{7})$/;
export const ROCKBLOCK_PREFIX_BYTES = 9;

/** `RB0001234` (or `RB1234`, padded) -> the 9 prefix bytes; null for anything else. */
export function rockblockPrefix(to: string): Uint8Array | null {
  const m = /^RB([0-9]{1,7})$/.exec(to.trim());
  if (!m) return null;
  return new TextEncoder().encode(`RB${m[1].padStart(7, '0')}`);
}

/** An MT payload that starts with `RB` and 7 digits came from that RockBLOCK: the sender and
 *  the rest; else null. */
export function splitRockblockSender(payload: Uint8Array): { from: string; body: Uint8Array } | null {
  if (payload.length < ROCKBLOCK_PREFIX_BYTES) return null;
  const head = String.fromCharCode(...payload.subarray(0, ROCKBLOCK_PREFIX_BYTES));
  if (!ROCKBLOCK_ADDRESS.test(head)) return null;
  return { from: head, body: payload.subarray(ROCKBLOCK_PREFIX_BYTES) };
}

function show(s: string): string {
  return JSON.stringify(s.length > 60 ? s.slice(0, 57) + '...' : s);
}

/** SBD checksum: the low 16 bits of the sum of the bytes (docs/protocols/iridium-sbd.md
 *  3.2, 3.4); sent and received MSB first. */
export function sbdChecksum(payload: Uint8Array): number {
  let sum = 0;
  for (const b of payload) sum += b;
  return sum & 0xffff;
}
