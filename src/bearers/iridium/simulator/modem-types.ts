import type { Clock } from '../../../lib/clock.ts';
import type { IridiumGateway } from './gateway.ts';

// What a simulated SBD modem (modem.ts) is built with, keeps as settings, and reports of each
// session.

export interface IridiumModemIdentity {
  manufacturer: string;
  model: string;
  /** What AT+CGMR answers, one line each. */
  revision: string[];
  /** 15 digits. */
  imei: string;
  /** The RockBLOCK serial number, 7 digits (iridium-sbd.md 3.6). */
  serial: string;
}

export interface IridiumModemFaults {
  /** Every final answer comes this late. */
  answerDelayMs: number;
  /** The modem neither echoes nor answers; the gateway keeps queueing. */
  unresponsive: boolean;
  /** The next AT+SBDRB answer carries a wrong checksum. */
  corruptNextMtChecksum: boolean;
}

/** Settings a power cycle, ATZ or AT&F forget. */
export interface IridiumSettings {
  echo: boolean;
  /** AT+SBDMTA: 1 = say SBDRING. */
  mta: number;
  /** AT&K: 0 none, 3 RTS/CTS (recorded only). */
  flowControl: number;
  /** AT&D (recorded only). */
  dtr: number;
}

export interface IridiumModemOptions {
  name?: string;
  clock?: Clock;
  /** Where sessions go; a private one when none is given. */
  gateway?: IridiumGateway;
  imei?: string;
  serial?: string;
  /** The MOMSN of the next session (default 0). */
  momsn?: number;
  /** How long AT+SBDIX / AT+SBDREG take (default 0; a scripted outcome may say otherwise). */
  sessionMs?: number;
  /** How long AT+CSQ waits for a fresh reading (default 0). */
  csqDelayMs?: number;
  /** AT+SBDWB gives up on missing bytes after this long (default 60 s, iridium-sbd.md 3.2). */
  writeTimeoutMs?: number;
  faults?: Partial<IridiumModemFaults>;
}

export interface SessionReport {
  command: 'SBDIX' | 'SBDIXA';
  mo: number;
  momsn: number;
  mt: number;
  mtmsn: number;
  mtLength: number;
  mtQueued: number;
  /** Bytes in the MO buffer when it went; null for a mailbox check. */
  moLength: number | null;
}
