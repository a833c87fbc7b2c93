import { airtimeLimitValue, type RadioConfig } from './protocol.ts';

// Step 6 of the host init sequence (docs/protocols/rnode.md 1.4): every value the radio echoes is
// checked against what was sent. Reticulum allows 100 Hz on the frequency and checks
// bandwidth, TX power, SF and radio state exactly; we also check CR and the airtime limits,
// which Reticulum leaves out, because a radio that silently runs another CR cannot talk to
// its peers. Every mismatch is reported at once.

export const FREQUENCY_TOLERANCE_HZ = 100;

/** The echoes the verify step waits for; airtime limits only when they were sent. */
export function expectedEchoes(c: RadioConfig): EchoType[] {
  const types: EchoType[] = ['frequency', 'bandwidth', 'txpower', 'sf', 'cr', 'radio_state'];
  if (c.st_alock !== null) types.push('st_alock');
  if (c.lt_alock !== null) types.push('lt_alock');
  return types;
}

/** Every configuration value the radio echoes back. */
export const ECHO_TYPES = ['frequency', 'bandwidth', 'txpower', 'sf', 'cr', 'radio_state', 'st_alock', 'lt_alock'] as const;
export type EchoType = (typeof ECHO_TYPES)[number];

/** Echoed values by type, in the units the protocol decoder gives (Hz, dBm, percent, on). */
export interface Echoes {
  frequency?: number;
  bandwidth?: number;
  txpower?: number;
  sf?: number;
  cr?: number;
  radio_state?: boolean;
  st_alock?: number;
  lt_alock?: number;
}

export interface EchoMismatch {
  field: string;
  expected: string;
  got: string;
}

export function checkEchoes(c: RadioConfig, e: Echoes): EchoMismatch[] {
  const out: EchoMismatch[] = [];
  const add = (field: string, expected: string, got: string) => out.push({ field, expected, got });
  if (e.frequency === undefined || Math.abs(e.frequency - c.frequency_hz) > FREQUENCY_TOLERANCE_HZ) {
    add('frequency', `${c.frequency_hz} Hz (±${FREQUENCY_TOLERANCE_HZ})`, shown(e.frequency, 'Hz'));
  }
  if (e.bandwidth !== c.bandwidth_hz) add('bandwidth', `${c.bandwidth_hz} Hz`, shown(e.bandwidth, 'Hz'));
  if (e.txpower !== c.tx_power_dbm) add('tx_power', `${c.tx_power_dbm} dBm`, shown(e.txpower, 'dBm'));
  if (e.sf !== c.sf) add('sf', String(c.sf), shown(e.sf, ''));
  if (e.cr !== c.cr) add('cr', String(c.cr), shown(e.cr, ''));
  if (e.radio_state !== true) add('radio_state', 'on', e.radio_state === undefined ? 'no echo' : 'off');
  // Compared as sent (percent × 100): the firmware stores exactly that.
  for (const [field, set] of [['st_alock', c.st_alock], ['lt_alock', c.lt_alock]] as const) {
    if (set === null) continue;
    const got = e[field];
    if (got === undefined || Math.round(got * 100) !== airtimeLimitValue(set)) add(field, `${airtimeLimitValue(set) / 100} %`, shown(got, '%'));
  }
  return out;
}

export function describeMismatches(m: EchoMismatch[]): string {
  return m.map((x) => `${x.field}: expected ${x.expected}, got ${x.got}`).join('; ');
}

function shown(v: number | undefined, unit: string): string {
  if (v === undefined) return 'no echo';
  return unit ? `${v} ${unit}` : String(v);
}
