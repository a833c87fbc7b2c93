import { DeviceError } from '../bearers/device-error.ts';
import { AppError } from '../lib/errors.ts';

// The HTTP answer of a driver's error that reaches the API (bearers/device-error.ts): drivers
// name a code and the device's facts, and this table, at the edge, gives the status. Only
// settings a driver refuses when an interface is created or changed reach an answer (the
// kind's schema refuses most before); their fields become the problem's `errors`. Any other
// device error that got here would be the device's fault, not the request's: 503.

const STATUS: Readonly<Record<string, number>> = {
  ERR_BEARER_SETTINGS: 400,
  ERR_RNODE_SETTINGS: 400,
};

const DEVICE_FAULT = 503;

/** The answer for a driver's error, or null for any other error (http/server.ts, problemOf). */
export function deviceProblem(error: unknown): AppError | null {
  if (!(error instanceof DeviceError)) return null;
  return new AppError(error.code, STATUS[error.code] ?? DEVICE_FAULT, error.message, { errors: error.facts.fields });
}
