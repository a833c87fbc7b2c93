import { parseInfo, type AtArg } from '../../shared/codec/at.ts';
import { octetsToHex } from '../codec/octets.ts';
import { encodeSmsc } from '../codec/address.ts';
import { CME, CMS, type Final } from './errors.ts';
import { readSubmitPdu } from './messages.ts';
import { cpinName, type SmsModem } from './modem.ts';
import { STAT, STAT_NAMES } from './storage.ts';
import { CHARSETS, cmglText, cmgrText, fromCharset, textBodyToUserData } from './text-mode.ts';

// The simulated modem's commands, one handler each, dispatched through COMMANDS (docs/style.md
// habit 3; a name not in it answers ERROR and is counted by the modem). General commands
// follow 3GPP TS 27.007 (and V.250 for E, I, Z); SMS commands 27.005 (docs/protocols/sms.md 4).

export type PromptKind =
  | { mode: 'pdu'; command: 'CMGS' | 'CMGW'; length: number; stat: number }
  | { mode: 'text'; command: 'CMGS' | 'CMGW'; to: string; stat: number };

export interface Answer {
  lines: string[];
  final: Final;
  /** Enter the `> ` prompt (AT+CMGS, AT+CMGW) instead of answering. */
  prompt?: PromptKind;
  /** Runs after the answer is written (a reset after AT+CFUN=1,1's OK). */
  after?: () => void;
}

export interface AtCommand {
  /** "+CMGS", "E", "I", "Z", "&F". */
  name: string;
  op: 'exec' | 'set' | 'read' | 'test';
  /** The number after a basic command (E1 -> 1); null when none. */
  value: number | null;
  args: AtArg[];
}

/** "E0+CMGF=0;+CNMI=2,1,0,0,0" (what follows "AT") to commands; null when it cannot be read. */
export function parseCommandLine(rest: string): AtCommand[] | null {
  const out: AtCommand[] = [];
  let i = 0;
  while (i < rest.length) {
    const ch = rest[i];
    if (ch === ' ' || ch === ';') {
      i++;
      continue;
    }
    if ('+^$%#*'.includes(ch)) {
      // Extended syntax (V.250 5.4.1): name, then =?, ?, =args or nothing; ends at ; outside quotes.
      const m = /^[+^$%#*][A-Za-z][A-Za-z0-9]*/.exec(rest.slice(i));
      if (!m) return null;
      let j = i + m[0].length;
      let quoted = false;
      while (j < rest.length && (quoted || rest[j] !== ';')) {
        if (rest[j] === '"') quoted = !quoted;
        j++;
      }
      const tail = rest.slice(i + m[0].length, j).trim();
      const name = m[0].toUpperCase();
      if (tail === '') out.push({ name, op: 'exec', value: null, args: [] });
      else if (tail === '?') out.push({ name, op: 'read', value: null, args: [] });
      else if (tail === '=?') out.push({ name, op: 'test', value: null, args: [] });
      else if (tail.startsWith('=')) out.push({ name, op: 'set', value: null, args: parseInfo(`X:${tail.slice(1)}`).args });
      else return null;
      i = j;
      continue;
    }
    // Basic syntax: a letter (or & and a letter), then digits (E1, I3, &F).
    const m = /^(&?[A-Za-z])(\d*)/.exec(rest.slice(i));
    if (!m) return null;
    out.push({ name: m[1].toUpperCase(), op: 'exec', value: m[2] === '' ? null : Number(m[2]), args: [] });
    i += m[0].length;
  }
  return out;
}

type Handler = (m: SmsModem, c: AtCommand) => Answer;

const ok = (...lines: string[]): Answer => ({ lines, final: 'OK' });
const error: Answer = { lines: [], final: 'ERROR' };
const cme = (code: number): Answer => ({ lines: [], final: { cme: code } });
const cms = (code: number): Answer => ({ lines: [], final: { cms: code } });
const int = (a: AtArg | undefined, min: number, max: number): number | null => (typeof a === 'number' && a >= min && a <= max ? a : null);

/** An SMS command needs an unlocked SIM (27.005 3.2.5: 310, 311, 316). */
function simBlocksSms(m: SmsModem): Answer | null {
  if (m.sim.state === 'pin') return cms(CMS.SIM_PIN_REQUIRED);
  if (m.sim.state === 'puk') return cms(CMS.SIM_PUK_REQUIRED);
  if (m.sim.state === 'blocked') return cms(CMS.SIM_FAILURE);
  return null;
}

function simBlocksMe(m: SmsModem): Answer | null {
  if (m.sim.state === 'pin') return cme(CME.SIM_PIN_REQUIRED);
  if (m.sim.state === 'puk') return cme(CME.SIM_PUK_REQUIRED);
  if (m.sim.state === 'blocked') return cme(CME.SIM_FAILURE);
  return null;
}

/** A string parameter, decoded from hex when AT+CSCS is "UCS2" (27.007 5.5). */
function stringArg(m: SmsModem, a: AtArg | undefined): string | null {
  if (typeof a !== 'string') return null;
  if (m.settings.cscs === 'UCS2' && /^(?:[0-9A-Fa-f]{4})+$/.test(a)) return fromCharset(a, 'UCS2');
  return a;
}

const identity = (field: 'manufacturer' | 'model' | 'revision' | 'imei'): Handler => (m, c) => (c.op === 'test' ? ok() : ok(m.identity[field]));

// ---- general (27.007, V.250) ----

const general: Record<string, Handler> = {
  E: (m, c) => {
    if (c.value !== null && c.value > 1) return error;
    m.settings.echo = c.value === 1;
    return ok();
  },
  V: (_m, c) => (c.value === 0 ? error : ok()), // only verbose result codes (ATV1)
  Q: (_m, c) => (c.value ? error : ok()),
  Z: (m) => {
    m.settings = m.defaultSettings();
    return ok();
  },
  '&F': (m) => {
    m.settings = m.defaultSettings();
    return ok();
  },
  I: (m) => ok(m.identity.manufacturer, m.identity.model, `Revision: ${m.identity.revision}`),
  '+CGMI': identity('manufacturer'),
  '+GMI': identity('manufacturer'),
  '+CGMM': identity('model'),
  '+GMM': identity('model'),
  '+CGMR': identity('revision'),
  '+GMR': identity('revision'),
  '+CGSN': identity('imei'),
  '+GSN': identity('imei'),
  '+CIMI': (m, c) => (c.op === 'test' ? ok() : (simBlocksMe(m) ?? ok(m.identity.imsi))),
  '+CMEE': (m, c) => {
    if (c.op === 'test') return ok('+CMEE: (0-2)');
    if (c.op === 'read') return ok(`+CMEE: ${m.settings.cmee}`);
    const n = c.op === 'exec' ? 0 : int(c.args[0], 0, 2);
    if (n === null) return cme(CME.INCORRECT_PARAMETERS);
    m.settings.cmee = n;
    return ok();
  },
  '+CPIN': cpin,
  '+CPINR': (m) => ok(`+CPINR: SIM PIN,${m.sim.pinLeft},3`, `+CPINR: SIM PUK,${m.sim.pukLeft},10`),
  '+CREG': (m, c) => {
    if (c.op === 'test') return ok('+CREG: (0-2)');
    if (c.op === 'read') {
      const n = m.settings.cregUrc;
      const registered = m.cregStat === 1 || m.cregStat === 5;
      return ok(`+CREG: ${n},${m.cregStat}${n === 2 && registered ? ',"00A1","0001B2C3"' : ''}`);
    }
    const n = c.op === 'exec' ? 0 : int(c.args[0], 0, 2);
    if (n === null) return cme(CME.INCORRECT_PARAMETERS);
    m.settings.cregUrc = n;
    return ok();
  },
  '+CGREG': (m, c) => (c.op === 'read' ? ok(`+CGREG: 0,${m.cregStat}`) : c.op === 'test' ? ok('+CGREG: (0-2)') : ok()),
  '+COPS': (m, c) => {
    if (c.op === 'read') return ok(m.cregStat === 1 || m.cregStat === 5 ? '+COPS: 0,0,"Fieldbridge Sim",7' : '+COPS: 0');
    if (c.op === 'test') return ok('+COPS: (2,"Fieldbridge Sim","FBSIM","00101",7),,(0-4),(0-2)');
    return ok();
  },
  '+CSQ': (m, c) => (c.op === 'test' ? ok('+CSQ: (0-31,99),(0-7,99)') : ok(m.cregStat === 1 || m.cregStat === 5 ? `+CSQ: ${m.signal},99` : '+CSQ: 99,99')),
  '+CFUN': (m, c) => {
    if (c.op === 'test') return ok('+CFUN: (0,1,4),(0,1)');
    if (c.op === 'read') return ok(`+CFUN: ${m.cfun}`);
    const fun = c.op === 'exec' ? null : int(c.args[0], 0, 4);
    const rst = c.args[1] === undefined || c.args[1] === null ? 0 : int(c.args[1], 0, 1);
    if (fun === null || fun === 2 || fun === 3 || rst === null) return cme(CME.INCORRECT_PARAMETERS);
    if (rst === 1) return { lines: [], final: 'OK', after: () => m.reset() };
    m.cfun = fun;
    return { lines: [], final: 'OK', after: () => m.registrationChanged() };
  },
  '+CSCS': (m, c) => {
    if (c.op === 'test') return ok(`+CSCS: (${CHARSETS.map((s) => `"${s}"`).join(',')})`);
    if (c.op === 'read') return ok(`+CSCS: "${m.settings.cscs}"`);
    const set = stringArg(m, c.args[0]);
    const name = set?.toUpperCase();
    if (!name || !(CHARSETS as readonly string[]).includes(name)) return cme(CME.OPERATION_NOT_SUPPORTED);
    m.settings.cscs = name;
    return ok();
  },
};

/** AT+CPIN (27.007 8.3): the PIN, three tries, then the PUK and a new PIN, ten tries. */
function cpin(m: SmsModem, c: AtCommand): Answer {
  if (c.op === 'test') return ok();
  if (c.op === 'read') return m.sim.state === 'blocked' ? cme(CME.SIM_FAILURE) : ok(`+CPIN: ${cpinName(m.sim.state)}`);
  if (c.op !== 'set') return cme(CME.INCORRECT_PARAMETERS);
  const code = c.args[0] === null || c.args[0] === undefined ? null : String(c.args[0]);
  if (code === null) return cme(CME.INCORRECT_PARAMETERS);
  const sim = m.sim;
  if (sim.state === 'ready') return cme(CME.OPERATION_NOT_ALLOWED);
  if (sim.state === 'blocked') return cme(CME.SIM_FAILURE);
  if (sim.state === 'pin') {
    if (code === sim.pin) {
      sim.state = 'ready';
      sim.pinLeft = 3;
      return { lines: [], final: 'OK', after: () => m.registrationChanged() };
    }
    sim.pinLeft--;
    if (sim.pinLeft <= 0) sim.state = 'puk';
    return cme(CME.INCORRECT_PASSWORD);
  }
  // SIM PUK: AT+CPIN="<puk>","<new pin>".
  const newPin = c.args[1] === null || c.args[1] === undefined ? null : String(c.args[1]);
  if (newPin === null) return cme(CME.SIM_PUK_REQUIRED);
  if (code !== sim.puk) {
    sim.pukLeft--;
    if (sim.pukLeft <= 0) sim.state = 'blocked';
    return cme(CME.INCORRECT_PASSWORD);
  }
  sim.pin = newPin;
  sim.state = 'ready';
  sim.pinLeft = 3;
  sim.pukLeft = 10;
  return { lines: [], final: 'OK', after: () => m.registrationChanged() };
}

// ---- SMS (27.005) ----

const CNMI_RANGES = { mode: [0, 2], mt: [0, 3], bm: [0, 0], ds: [0, 2], bfr: [0, 1] } as const;

/** A setting that is 0 or 1 (AT+CMGF, AT+CSDH): `=?` lists (0,1), `?` reads it, `=n` sets it,
 *  the bare command sets 0. */
const zeroOrOne = (name: string, key: 'cmgf' | 'csdh'): Handler => (m, c) => {
  if (c.op === 'test') return ok(`${name}: (0,1)`);
  if (c.op === 'read') return ok(`${name}: ${m.settings[key]}`);
  const value = c.op === 'exec' ? 0 : int(c.args[0], 0, 1);
  if (value === null) return cms(CMS.OPERATION_NOT_SUPPORTED);
  m.settings[key] = value;
  return ok();
};

const sms: Record<string, Handler> = {
  '+CSMS': (_m, c) => (c.op === 'read' ? ok('+CSMS: 0,1,1,1') : c.op === 'test' ? ok('+CSMS: (0)') : c.args[0] === 0 ? ok('+CSMS: 1,1,1') : cms(CMS.OPERATION_NOT_SUPPORTED)),
  '+CMGF': zeroOrOne('+CMGF', 'cmgf'),
  '+CSDH': zeroOrOne('+CSDH', 'csdh'),
  '+CSMP': (m, c) => {
    if (c.op === 'test') return ok();
    if (c.op === 'read') return ok(`+CSMP: ${m.settings.csmp.join(',')}`);
    const next = [...m.settings.csmp] as [number, number, number, number];
    for (let i = 0; i < 4; i++) {
      const a = c.args[i];
      if (a === undefined || a === null) continue;
      if (int(a, 0, 255) === null) return cms(CMS.INVALID_TEXT_MODE_PARAMETER);
      next[i] = a as number;
    }
    m.settings.csmp = next;
    return ok();
  },
  '+CSCA': (m, c) => {
    if (c.op === 'test') return ok();
    const blocked = simBlocksSms(m);
    if (blocked) return blocked;
    if (c.op === 'read') return ok(`+CSCA: "${m.smsc}",${m.smsc.startsWith('+') ? 145 : 129}`);
    const number = stringArg(m, c.args[0]);
    if (!number || !/^\+?[0-9]{1,20}$/.test(number)) return cms(CMS.OPERATION_NOT_ALLOWED);
    m.smsc = number;
    return ok();
  },
  '+CPMS': (m, c) => {
    const s = m.storage;
    if (c.op === 'test') return ok(`+CPMS: ("${s.name}"),("${s.name}"),("${s.name}")`);
    const blocked = simBlocksSms(m);
    if (blocked) return blocked;
    const counts = `${s.used},${s.capacity}`;
    if (c.op === 'read') return ok(`+CPMS: "${s.name}",${counts},"${s.name}",${counts},"${s.name}",${counts}`);
    if (c.op !== 'set' || c.args.length === 0 || c.args.length > 3) return cms(CMS.OPERATION_NOT_ALLOWED);
    for (const a of c.args) if (a !== null && stringArg(m, a)?.toUpperCase() !== s.name) return cms(CMS.OPERATION_NOT_SUPPORTED);
    return ok(`+CPMS: ${counts},${counts},${counts}`);
  },
  '+CNMI': (m, c) => {
    if (c.op === 'test') return ok('+CNMI: (0-2),(0-3),(0),(0-2),(0,1)');
    if (c.op === 'read') {
      const n = m.settings.cnmi;
      return ok(`+CNMI: ${n.mode},${n.mt},${n.bm},${n.ds},${n.bfr}`);
    }
    const values = { mode: 0, mt: 0, bm: 0, ds: 0, bfr: 0 };
    const keys = Object.keys(CNMI_RANGES) as (keyof typeof CNMI_RANGES)[];
    for (const [i, key] of keys.entries()) {
      const a = c.args[i];
      if (a === undefined || a === null) continue;
      const [min, max] = CNMI_RANGES[key];
      const v = int(a, min, max);
      if (v === null) return cms(CMS.OPERATION_NOT_SUPPORTED);
      values[key] = v;
    }
    const asText = keys.map((k) => values[k]).join(',');
    if (m.faults.refuseCnmi.includes(asText)) return cms(CMS.OPERATION_NOT_SUPPORTED);
    m.settings.cnmi = values;
    return { lines: [], final: 'OK', after: () => (values.mode > 0 ? m.releaseHeld(values.bfr === 0) : undefined) };
  },
  '+CMGS': (m, c) => promptFor(m, c, 'CMGS'),
  '+CMGW': (m, c) => promptFor(m, c, 'CMGW'),
  '+CMGR': (m, c) => {
    if (c.op === 'test') return ok();
    const blocked = simBlocksSms(m);
    if (blocked) return blocked;
    const index = c.op === 'set' ? c.args[0] : null;
    if (typeof index !== 'number' || !m.storage.inRange(index)) return cms(CMS.INVALID_MEMORY_INDEX);
    const msg = m.storage.get(index);
    if (!msg) return ok(); // an empty slot: OK and nothing (SIMCom, Quectel; others answer 321)
    const lines = m.settings.cmgf === 0 ? [`+CMGR: ${msg.stat},,${msg.tpdu.length}`, pduOf(msg)] : cmgrText(msg, m.settings);
    if (msg.stat === STAT.REC_UNREAD) msg.stat = STAT.REC_READ;
    return ok(...lines);
  },
  '+CMGL': (m, c) => {
    const text = m.settings.cmgf === 1;
    if (c.op === 'test') return ok(text ? `+CMGL: (${STAT_NAMES.map((s) => `"${s}"`).join(',')})` : '+CMGL: (0-4)');
    const blocked = simBlocksSms(m);
    if (blocked) return blocked;
    let stat: number = STAT.REC_UNREAD; // 27.005 3.4.2: the default <stat> is "received unread"
    if (c.op === 'set') {
      const a = c.args[0];
      const found = text && typeof a === 'string' ? STAT_NAMES.indexOf(a.toUpperCase() as (typeof STAT_NAMES)[number]) : !text ? (int(a, 0, 4) ?? -1) : -1;
      if (found < 0) return cms(text ? CMS.INVALID_TEXT_MODE_PARAMETER : CMS.INVALID_PDU_MODE_PARAMETER);
      stat = found;
    }
    const lines: string[] = [];
    const listed = m.storage.list(stat);
    for (const msg of listed) {
      if (text) lines.push(...cmglText(msg, m.settings));
      else lines.push(`+CMGL: ${msg.index},${msg.stat},,${msg.tpdu.length}`, pduOf(msg));
    }
    for (const msg of listed) if (msg.stat === STAT.REC_UNREAD) msg.stat = STAT.REC_READ;
    return ok(...lines);
  },
  '+CMGD': (m, c) => {
    const s = m.storage;
    if (c.op === 'test') return ok(`+CMGD: (${s.list().map((x) => x.index).join(',')}),(0-4)`);
    const blocked = simBlocksSms(m);
    if (blocked) return blocked;
    if (c.op !== 'set') return cms(CMS.INVALID_MEMORY_INDEX);
    const flag = c.args[1] === undefined || c.args[1] === null ? 0 : int(c.args[1], 0, 4);
    if (flag === null) return cms(CMS.OPERATION_NOT_SUPPORTED);
    if (flag > 0) s.deleteByFlag(flag as 1 | 2 | 3 | 4);
    else {
      const index = c.args[0];
      if (typeof index !== 'number' || !s.inRange(index)) return cms(CMS.INVALID_MEMORY_INDEX);
      s.delete(index);
    }
    return { lines: [], final: 'OK', after: () => m.flushNetwork() };
  },
  '+CMSS': (m, c) => {
    const blocked = simBlocksSms(m);
    if (blocked) return blocked;
    const index = c.args[0];
    const msg = typeof index === 'number' ? m.storage.get(index) : undefined;
    if (!msg || msg.kind !== 'submit') return cms(CMS.INVALID_MEMORY_INDEX);
    const answer = send(m, pduOf(msg), msg.tpdu.length);
    if (answer.final === 'OK') msg.stat = STAT.STO_SENT;
    return { ...answer, lines: answer.lines.map((l) => l.replace('+CMGS', '+CMSS')) };
  },
};

const pduOf = (msg: { smsc: string | null; tpdu: Uint8Array }) => octetsToHex(encodeSmsc(msg.smsc)) + octetsToHex(msg.tpdu);

/** AT+CMGS / AT+CMGW: checks, then the `> ` prompt (27.005 3.5.1, 3.5.3). */
function promptFor(m: SmsModem, c: AtCommand, command: 'CMGS' | 'CMGW'): Answer {
  if (c.op === 'test') return ok();
  const blocked = simBlocksSms(m);
  if (blocked) return blocked;
  if (c.op !== 'set') return cms(m.settings.cmgf === 0 ? CMS.INVALID_PDU_MODE_PARAMETER : CMS.INVALID_TEXT_MODE_PARAMETER);
  const stat = command === 'CMGS' ? STAT.STO_UNSENT : (c.args[1] === undefined ? STAT.STO_UNSENT : int(c.args[1], 0, 3) ?? -1);
  if (m.settings.cmgf === 0) {
    const length = int(c.args[0], 1, 164);
    if (length === null || stat < 0) return cms(CMS.INVALID_PDU_MODE_PARAMETER);
    return { lines: [], final: 'OK', prompt: { mode: 'pdu', command, length, stat } };
  }
  const to = stringArg(m, c.args[0]);
  if (!to || !/^\+?[0-9*#]{1,20}$/.test(to)) return cms(CMS.INVALID_TEXT_MODE_PARAMETER);
  return { lines: [], final: 'OK', prompt: { mode: 'text', command, to, stat: STAT.STO_UNSENT } };
}

/** What follows the prompt, ended by Ctrl-Z. */
export function completeBody(m: SmsModem, kind: PromptKind, body: string): Answer {
  if (kind.mode === 'pdu') {
    if (kind.command === 'CMGW') {
      const parsed = readSubmitPdu(body, { tpduLength: kind.length });
      if (!parsed.ok) return cms(CMS.INVALID_PDU_MODE_PARAMETER);
      const bytes = Uint8Array.from(Buffer.from(body, 'hex'));
      const smscLength = bytes[0];
      const stored = m.storage.store({ stat: kind.stat as 0 | 1 | 2 | 3, kind: 'submit', smsc: null, tpdu: bytes.subarray(1 + smscLength) });
      return stored ? ok(`+CMGW: ${stored.index}`) : cms(CMS.MEMORY_FULL);
    }
    return send(m, body, kind.length);
  }
  const [fo, , pid, dcs] = m.settings.csmp;
  const ud = textBodyToUserData(body, dcs, m.settings.cscs);
  if (!ud) return cms(CMS.INVALID_TEXT_MODE_PARAMETER);
  if (kind.command === 'CMGW') return cms(CMS.OPERATION_NOT_SUPPORTED); // text-mode CMGW: not simulated
  return submit(m, { to: kind.to, statusReport: (fo & 0x20) !== 0, pid, userData: ud.userData, text: ud.text, concat: null });
}

function send(m: SmsModem, hex: string, length: number): Answer {
  const parsed = readSubmitPdu(hex, { tpduLength: length });
  if (!parsed.ok) {
    m.counters.sendErrors++;
    m.emit('bad-pdu', parsed.error);
    return cms(CMS.INVALID_PDU_MODE_PARAMETER);
  }
  return submit(m, parsed.message);
}

function submit(m: SmsModem, message: Parameters<SmsModem['network']['submit']>[2]): Answer {
  const failing = m.faults.failSends;
  if (failing && failing.remaining > 0) {
    failing.remaining--;
    if (failing.remaining === 0) m.faults.failSends = null;
    m.counters.sendErrors++;
    return cms(failing.code);
  }
  if (m.cfun !== 1 || !m.registered) {
    m.counters.sendErrors++;
    return cms(CMS.NO_NETWORK_SERVICE);
  }
  const mr = m.nextMr;
  m.nextMr = (m.nextMr + 1) & 0xff;
  m.counters.sent++;
  m.network.submit(m.number, mr, message);
  m.emit('sent', message, mr);
  return ok(`+CMGS: ${mr}`);
}

export const COMMANDS: Readonly<Record<string, Handler>> = { ...general, ...sms };
