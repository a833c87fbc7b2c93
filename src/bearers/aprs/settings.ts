import { z } from 'zod';
import { MAX_DIGIPEATERS, parseAddress } from './codec/ax25.ts';

// Settings of an `aprs` interface (docs/aprs.md, "Settings"). The device is the KISS TNC (a
// serial port, tcp://host:8001 for Dire Wolf, sim://<channel>) or `auto` for an interface on
// APRS-IS alone; APRS-IS is the aprs_is_* settings. Flat, so the passcode is one secret field.

// The marker a read shows for a stored secret (bridge/interfaces/secrets.ts); spelled out here,
// since bearers/ imports nothing from bridge/.
const REDACTED = '<redacted>';
const int = (what: string, min: number, max: number) =>
  z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` })
    .min(min, { error: `${what} must be ${min} to ${max}` }).max(max, { error: `${what} must be ${min} to ${max}` });

/** A callsign with optional SSID, as AX.25 carries it: 1-6 letters and digits, SSID 0-15. */
export const CALLSIGN = z.string().regex(/^[A-Za-z0-9]{1,6}(-(1[0-5]|[1-9]))?$/, {
  error: 'must be a callsign of 1 to 6 letters and digits with an optional SSID -1 to -15, e.g. N0CALL-10',
});

/** The Dire Wolf KISS TCP port: a tcp:// value without a port means it. */
export const KISS_TCP_PORT = 8001;
/** APRS-IS's user-filter port. */
export const APRS_IS_PORT = 14580;

const path = z.string().max(80).refine((v) => v === '' || (v.split(',').length <= MAX_DIGIPEATERS && v.split(',').every((a) => parseAddress(a.toUpperCase()) !== null && !a.endsWith('*'))), {
  error: `path must be up to ${MAX_DIGIPEATERS} comma-separated digipeater aliases or callsigns, e.g. WIDE1-1,WIDE2-1 (empty for none)`,
});

const server = z.string().max(255).regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/, { error: 'aprs_is_server must be host or host:port, e.g. rotate.aprs2.net:14580' });

export const AprsSettings = z
  .strictObject({
    callsign: CALLSIGN.nullable().default(null)
      .describe('The operator\'s callsign with SSID (e.g. N0CALL-10). Required before anything is transmitted, on RF or to APRS-IS; without it the interface only listens'),
    path: path.default('WIDE1-1,WIDE2-1').describe('The digipeater path of what the interface transmits on RF'),
    tnc_port: int('tnc_port', 0, 15).default(0).describe('The KISS port (radio channel) of a multi-port TNC'),
    aprs_is_server: server.nullable().default(null)
      .describe('APRS-IS server as host:port (port 14580 when left out), e.g. rotate.aprs2.net:14580; null: no APRS-IS'),
    aprs_is_passcode: z.union([z.string().regex(/^-?\d{1,5}$/, { error: 'aprs_is_passcode must be a number' }), z.literal(REDACTED)]).nullable().default(null)
      .describe('The APRS-IS passcode of the callsign. A secret: shown and exported as "<redacted>", never logged. Without it (or -1) the login is read-only'),
    aprs_is_filter: z.string().max(512).regex(/^[\x21-\x7e ]*$/, { error: 'aprs_is_filter must be printable ASCII' }).nullable().default(null)
      .describe('Server-side filter sent at login, e.g. "r/47.37/8.54/50 g/N0CALL*"; null: only what is addressed to the callsign'),
    igate: z.boolean().default(false)
      .describe('Act as an iGate: gate what is heard on RF to APRS-IS, and APRS-IS messages to RF for stations heard directly in the last 30 minutes (needs a TNC, APRS-IS and a passcode)'),
    beacon: z.strictObject({
      latitude: z.number().min(-90).max(90),
      longitude: z.number().min(-180).max(180),
      symbol: z.string().regex(/^[/\\A-Z0-9][\x21-\x7e]$/, { error: 'symbol is the table (/ or \\ or an overlay) and the code, e.g. "/-" (house)' }).default('/-'),
      comment: z.string().max(40).regex(/^[\x20-\x7e]*$/, { error: 'comment must be printable ASCII' }).default(''),
      interval_min: int('interval_min', 10, 1440).default(30),
    }).nullable().default(null)
      .describe('The station\'s own position beacon (off when null); at most one every 10 minutes'),
    rf_min_gap_s: int('rf_min_gap_s', 0, 600).default(5)
      .describe('Least time between two transmissions on RF, in seconds'),
    rf_max_per_10min: int('rf_max_per_10min', 1, 600).default(30)
      .describe('Most transmissions on RF in any 10 minutes; more wait their turn (acknowledgements first)'),
  })
  .describe('Settings of an aprs interface');
export type AprsSettings = z.infer<typeof AprsSettings>;

export const APRS_SECRET_SETTINGS = ['aprs_is_passcode'] as const;

/** host and port of aprs_is_server. */
export function serverAddress(value: string): { host: string; port: number } {
  const m = /^\[?(.+?)\]?(?::(\d+))?$/.exec(value)!;
  return { host: m[1], port: m[2] === undefined ? APRS_IS_PORT : Number(m[2]) };
}

/** The APRS-IS passcode of a callsign (docs/protocols/aprs.md 3): a 15-bit hash of the
 *  callsign without SSID, upper case. The stand-in server checks logins with it. */
export function aprsIsPasscode(callsign: string): number {
  const call = callsign.toUpperCase().split('-')[0];
  let hash = 0x73e2;
  for (let i = 0; i < call.length; i += 2) {
    hash ^= call.charCodeAt(i) << 8;
    if (i + 1 < call.length) hash ^= call.charCodeAt(i + 1);
  }
  return hash & 0x7fff;
}
