import { driverFor } from '../../bearers/drivers.ts';
import { badRequest } from '../../lib/errors.ts';
import { redactFields, restoreFields } from '../config/secrets.ts';

// Secret interface settings (DriverModule.secretSettings, e.g. a SIM PIN), the way the hub
// password is handled in the configuration sections (docs/api.md 2.6): answers and exports
// show "<redacted>"; a write carrying the marker keeps what is stored; the marker where nothing
// is stored is refused rather than stored as the secret.

export function redactSettings(kind: string, settings: Record<string, unknown>): Record<string, unknown> {
  return redactFields(settings, driverFor(kind)?.secretSettings);
}

/** The incoming settings with every marker replaced by the stored secret; 400 naming the
 *  field when there is none to keep. */
export function restoreSettings(kind: string, incoming: Record<string, unknown>, stored: Record<string, unknown> | undefined, path: string): Record<string, unknown> {
  const restored = restoreFields(incoming, stored ?? {}, driverFor(kind)?.secretSettings);
  if (restored.missing.length > 0) {
    throw badRequest(`${path} carries the redaction marker but no secret is stored to keep`, restored.missing.map((f) => ({ path: `${path}.${f}`, message: 'carries the redaction marker but no secret is stored to keep' })));
  }
  return restored.value;
}
