import type { SupervisedDriverOptions } from '../shared/links/supervised-driver.ts';

// How long the Iridium driver waits for what (docs/protocols/iridium-sbd.md section 3), and
// what it is built with. Tests shorten these.

export interface IridiumTiming {
  commandTimeoutMs: number;
  /** AT+SBDWB: longer than the modem's own 60 s, so its status `1` arrives instead of our next
   *  command being taken for message bytes (iridium-sbd.md 3.2). */
  writeTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A session that failed with "no network service" (32, 36) holds at least this long (3.7). */
  noServiceHoldMs: number;
  /** While idle, AT+CSQF this often: the signal in health stays fresh, and a modem that
   *  stopped answering is noticed before the next message needs it. */
  healthPollMs: number;
  /** AT+SBDIX's limit; default: the session_timeout_s setting (tests shorten it). */
  sessionTimeoutMs?: number;
}

export const DEFAULT_IRIDIUM_TIMING: IridiumTiming = {
  commandTimeoutMs: 5_000, writeTimeoutMs: 65_000, backoffInitialMs: 1_000, backoffMaxMs: 60_000, noServiceHoldMs: 180_000, healthPollMs: 60_000,
};

export type IridiumDriverOptions = SupervisedDriverOptions<IridiumTiming>;

/** Why no session may start now; `phase`: shown as the interface's state, with `cause`. */
