import { z } from 'zod';
import { driverFor } from '../../bearers/drivers.ts';
import { badRequest } from '../../lib/errors.ts';
import { REDACTION_MARKER, redactFields, restoreFields } from '../config/secrets.ts';

// Secret interface settings (DriverModule.secretSettings, e.g. a SIM PIN), the way the hub
// password is handled in the configuration sections (docs/api.md 2.6): answers and exports
// show "<redacted>"; a write carrying the marker keeps what is stored; the marker where nothing
// is stored is refused rather than stored as the secret.

// Stored settings may hold fields their kind's schema does not know: an sms interface created
// while the kind had no schema took any field, a `sim_pin` too. Such a field cannot
// be told from a secret, so it is shown and exported as the marker, like one; the schema
// refuses it on the next write, so the operator removes it there.

export function redactSettings(kind: string, settings: Record<string, unknown>): Record<string, unknown> {
  const redacted = redactFields(settings, driverFor(kind)?.secretSettings);
  const known = knownFields(kind);
  if (!known) return redacted;
  let out = redacted;
  for (const [field, value] of Object.entries(redacted)) {
    if (known.has(field) || value === null || value === undefined) continue;
    if (out === redacted) out = { ...redacted };
    out[field] = REDACTION_MARKER;
  }
  return out;
}

/** The fields a kind's settings schema names, or null for a kind that takes any (no schema of
 *  its own: unspecifiedSettings) or is unknown. */
function knownFields(kind: string): Set<string> | null {
  const schema = driverFor(kind)?.settings;
  const shape = schema instanceof z.ZodObject ? schema.shape : undefined;
  return shape ? new Set(Object.keys(shape)) : null;
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
