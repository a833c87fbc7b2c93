import { MAX_MO_BYTES } from './gateway.ts';
import type { IridiumModem } from './modem.ts';

// The simulated SBD modem's commands, one handler each, dispatched through COMMANDS
// (docs/style.md habit 3; a name not in it answers ERROR and is counted by the modem). Wire
// facts: docs/protocols/iridium-sbd.md; where it is silent, the ISU AT Command Reference as
// the NAL Research guides restate it. One command per line: the SBD hosts we know (SparkFun,
// RockBLOCK's examples) never chain commands.

export interface SbdCommand {
  /** "E", "&K", "+SBDWB", "-MSSTM" (upper case). */
  name: string;
  op: 'exec' | 'set' | 'read' | 'test';
  /** Digits right after the name (E1 -> 1, +SBDD2 -> 2); null when none. */
  value: number | null;
  /** After `=`, as sent (case kept: AT+SBDWT's text). */
  arg: string;
}

/** What the modem does about a command. */
export type Reply =
  /** Answer text: information lines and the final result. */
  | { text: string }
  /** A binary answer (AT+SBDRB), then OK. */
  | { bytes: Uint8Array }
  /** AT+SBDWB: READY, then n payload bytes and the 2-byte checksum. */
  | { binary: number }
  /** AT+SBDWT alone: READY, then text up to CR. */
  | { textInput: true }
  /** Busy this long (a session, a fresh CSQ), then the reply `then` makes. */
  | { after: number; then: () => Reply };

export const info = (...lines: string[]): string => lines.map((l) => `\r\n${l}\r\n`).join('');
export const ok = (...lines: string[]): { text: string } => ({ text: info(...lines, 'OK') });
export const ERROR: { text: string } = { text: info('ERROR') };

/** "E0", "+SBDD2", "+SBDWB=20", "+SBDMTA?" (what follows "AT"); null when it is no command. */
export function parseCommand(rest: string): SbdCommand | null {
  if (rest === '') return { name: '', op: 'exec', value: null, arg: '' };
  const m = /^([+-][A-Za-z]+|&?[A-Za-z])(\d*)(.*)$/s.exec(rest);
  if (!m) return null;
  const [, name, digits, tail] = m;
  const value = digits === '' ? null : Number(digits);
  const upper = name.toUpperCase();
  if (tail === '') return { name: upper, op: 'exec', value, arg: '' };
  if (tail === '?') return { name: upper, op: 'read', value, arg: '' };
  if (tail === '=?') return { name: upper, op: 'test', value, arg: '' };
  if (tail.startsWith('=')) return { name: upper, op: 'set', value, arg: tail.slice(1) };
  return null;
}

type Handler = (m: IridiumModem, c: SbdCommand) => Reply;

/** An exec command without digits or arguments. */
const plain = (f: (m: IridiumModem) => Reply): Handler => (m, c) => (c.op === 'exec' && c.value === null ? f(m) : ERROR);

/** A basic command with a digit from `allowed` (none = 0, V.250 5.3.1). */
const basic = (allowed: number[], f: (m: IridiumModem, v: number) => void): Handler => (m, c) => {
  const v = c.value ?? 0;
  if (c.op !== 'exec' || !allowed.includes(v)) return ERROR;
  f(m, v);
  return ok();
};

/** The SBD status digit and OK, as AT+SBDWB and AT+SBDD answer (iridium-sbd.md 3.2). */
export const status = (digit: number): { text: string } => ({ text: info(String(digit), 'OK') });

// ---- AT+SBDIX location (ISU: [+|-]DDMM.MMM,[+|-]dddmm.mmm) ----
const LOCATION = /^[+-]?\d{4}\.\d{3},[+-]?\d{5}\.\d{3}$/;

const session: Handler = (m, c) => {
  if (c.value !== null || c.op === 'read' || c.op === 'test' || (c.op === 'set' && !LOCATION.test(c.arg))) return ERROR;
  return m.startSession(c.name === '+SBDIXA' ? 'SBDIXA' : 'SBDIX');
};

export const COMMANDS: Readonly<Record<string, Handler>> = {
  '': () => ok(),
  E: basic([0, 1], (m, v) => (m.settings.echo = v === 1)),
  // iridium-sbd.md 3.1: &K0 for three-wire links; &K3 (RTS/CTS) is the power-up value.
  '&K': basic([0, 3], (m, v) => (m.settings.flowControl = v)),
  '&D': basic([0, 1, 2, 3], (m, v) => (m.settings.dtr = v)),
  Z: basic([0], (m) => (m.settings = m.defaultSettings())),
  '&F': basic([0], (m) => (m.settings = m.defaultSettings())),
  '+CGSN': plain((m) => ok(m.identity.imei)),
  '+CGMI': plain((m) => ok(m.identity.manufacturer)),
  '+CGMM': plain((m) => ok(m.identity.model)),
  '+CGMR': plain((m) => ok(...m.identity.revision)),
  // iridium-sbd.md 3.5: +CSQ waits for a fresh reading, +CSQF answers the last one at once.
  '+CSQ': plain((m) => ({ after: m.csqDelayMs, then: () => ok(`+CSQ:${m.gateway.bars}`) })),
  '+CSQF': plain((m) => ok(`+CSQF:${m.gateway.bars}`)),
  '-MSSTM': plain((m) => ok(`-MSSTM: ${m.systemTime()}`)),
  '+SBDMTA': (m, c) => {
    if (c.value !== null) return ERROR;
    if (c.op === 'read') return ok(`+SBDMTA:${m.settings.mta}`);
    if (c.op === 'test') return ok('+SBDMTA:(0-1)');
    if (c.op !== 'set' || (c.arg !== '0' && c.arg !== '1')) return ERROR;
    m.settings.mta = Number(c.arg);
    return ok();
  },
  // iridium-sbd.md 3.4: 0 clears MO, 1 MT, 2 both; the answer is the status digit 0.
  '+SBDD': (m, c) => {
    if (c.op !== 'exec' || c.value === null || c.value > 2) return ERROR;
    m.clearBuffers(c.value);
    return status(0);
  },
  // ISU +SBDC: clears the MOMSN (answers 0).
  '+SBDC': plain((m) => {
    m.momsn = 0;
    return status(0);
  }),
  '+SBDWT': (m, c) => {
    // iridium-sbd.md 3.2: up to 120 bytes inline, or AT+SBDWT alone: READY, then the text.
    if (c.value !== null) return ERROR;
    if (c.op === 'exec') return { textInput: true };
    if (c.op !== 'set') return ERROR;
    const bytes = new Uint8Array(Buffer.from(c.arg, 'latin1'));
    if (bytes.length > 120) return ERROR;
    // ISU: +SBDWT=[<text message>]. An empty text answers OK and leaves the MO buffer as it
    // was: a 9603N then sends the previous message again (mikalhart/IridiumSBD issue #10);
    // the Arduino libraries' receive-only call sends "AT+SBDWT=".
    if (bytes.length > 0) m.writeMo(bytes);
    return ok();
  },
  '+SBDWB': (m, c) => {
    if (c.op !== 'set' || c.value !== null || !/^\d{1,5}$/.test(c.arg)) return ERROR;
    const n = Number(c.arg);
    // iridium-sbd.md 3.2: n counts the payload only, 1-340; else status 3 and no READY.
    if (n < 1 || n > MAX_MO_BYTES) {
      m.counters.sizeErrors++;
      return status(3);
    }
    return { binary: n };
  },
  '+SBDRB': plain((m) => ({ bytes: m.readMtBinary() })),
  '+SBDRT': plain((m) => {
    m.counters.mtRead++;
    const text = m.mt === null ? '' : Buffer.from(m.mt).toString('latin1');
    m.emit('mt-read', m.mt ?? new Uint8Array(0));
    // ISU +SBDRT: `+SBDRT:` and CR, then the buffer's text.
    return { text: `\r\n+SBDRT:\r\n${text}\r\n` + info('OK') };
  }),
  // ISU +SBDS / +SBDSX: MOMSN is the one the next session will use; MTMSN is -1 when the MT
  // buffer is empty.
  '+SBDS': plain((m) => ok(`+SBDS: ${m.statusFields().slice(0, 4).join(', ')}`)),
  '+SBDSX': plain((m) => ok(`+SBDSX: ${m.statusFields().join(', ')}`)),
  '+SBDIX': session,
  '+SBDIXA': session,
  // iridium-sbd.md 3.5: a registration (at most one per 3 minutes on the real network; not
  // simulated). ISU: +SBDREG:<status>,<reg err>; status 0 detached, 2 registered.
  '+SBDREG': (m, c) => {
    if (c.value !== null || c.op === 'test') return ERROR;
    if (c.op === 'read') return ok(`+SBDREG:${m.registered ? 2 : 0}`);
    if (c.op !== 'exec') return ERROR;
    return { after: m.sessionMs, then: () => m.register() };
  },
};
