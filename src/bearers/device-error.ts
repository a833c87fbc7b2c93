import type { FieldError } from '../lib/errors.ts';

// What drivers and links throw when a device, a port or a driver's settings fail. It carries a
// stable code (the ERR_* strings docs/errors.md lists: they reach interface states, delivery
// errors and, for a few, API answers), the device's own facts as fields rather than prose, and
// whether trying again may help without a person doing something. It carries no HTTP status:
// drivers know devices, not requests. The few that reach an API answer get their status at the
// edge, from one table (bridge/device-problems.ts).

/** The device's own facts behind an error; each only when the device or the OS said it. */
export interface DeviceFacts {
  /** The command the device was sent (an AT command, a companion-protocol command). */
  command?: string;
  /** What the device answered instead: an AT final result (`ERROR`, `+CME ERROR`), a radio's
   *  response type, a SIM state, a detect byte. */
  answer?: string;
  /** The modem's error number (`+CME ERROR: n`, `+CMS ERROR: n`). */
  modemError?: number;
  /** The radio's own error byte (an RNode error frame). */
  radioError?: number;
  /** The operating system's or BlueZ's error name (ENOENT, EACCES, org.bluez.Error.Failed). */
  systemError?: string;
  /** The port value, path or address the error is about. */
  port?: string;
  /** Settings the driver refused, each with its reason. */
  fields?: FieldError[];
}

export class DeviceError extends Error {
  readonly code: string;
  /** Whether trying again later may succeed by itself (a device away, a busy port), as opposed
   *  to needing a person (wrong settings, a locked SIM, old firmware). */
  readonly retryable: boolean;
  readonly facts: DeviceFacts;

  constructor(code: string, message: string, options: { retryable: boolean; facts?: DeviceFacts }) {
    super(message);
    this.name = 'DeviceError';
    this.code = code;
    this.retryable = options.retryable;
    this.facts = options.facts ?? {};
  }
}

/** An error as an interface's last_error shows it: a device error's code first
 *  (`ERR_SMS_PIN_WRONG: the SIM refused the PIN...`), so docs/errors.md finds it. */
export function errorText(error: unknown): string {
  if (error instanceof DeviceError && !error.message.startsWith(error.code)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
