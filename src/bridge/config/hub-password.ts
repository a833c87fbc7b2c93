import { isJsonObject } from '../../lib/json.ts';
import { parseMqttUrl } from '../../hubwire/mqtt-options.ts';
import { REDACTION_MARKER } from './secrets.ts';

// The hub section's password belongs to the broker it was given for. Reads
// redact it and a write that leaves it out (or sends the marker back) keeps it, which is what
// lets an admin edit the section without knowing it; but admins may also change mqtt_url, and
// the uplink sends the stored password to whatever broker the URL names. So a write that
// moves the broker (another host or port, or mqtts to mqtt, or a broker where there was none)
// without giving the password in clear clears it: whoever knows the password gives it again
// for the new broker. The same rule holds for PUT/PATCH /api/config/hub and for an import.

/** True when the uplink would connect somewhere the stored password was not given for. */
export function brokerMoved(before: unknown, after: unknown): boolean {
  if (after === null || after === undefined || after === before) return false;
  if (typeof before !== 'string' || typeof after !== 'string') return true;
  try {
    const a = parseMqttUrl(before);
    const b = parseMqttUrl(after);
    return a.host.toLowerCase() !== b.host.toLowerCase() || a.port !== b.port || (a.protocol === 'mqtts' && b.protocol === 'mqtt');
  } catch {
    // An unparseable URL is refused by the schema anyway; nothing is kept for it.
    return true;
  }
}

/** Whether a write (a patch or an imported section) carries the password in clear. */
export function passwordGiven(input: unknown): boolean {
  return isJsonObject(input) && typeof input.password === 'string' && input.password !== REDACTION_MARKER;
}

/**
 * The hub section to store: `merged` (the write with kept secrets restored), with its password
 * cleared when the broker moved away from `stored`'s and `input` did not give the password.
 * `cleared` says whether that happened (for the log).
 */
export function bindPasswordToBroker<T>(merged: T, stored: unknown, input: unknown): { value: T; cleared: boolean } {
  if (!isJsonObject(merged) || merged.password === null || merged.password === undefined) return { value: merged, cleared: false };
  if (passwordGiven(input)) return { value: merged, cleared: false };
  const before = isJsonObject(stored) ? stored.mqtt_url : null;
  if (!brokerMoved(before ?? null, merged.mqtt_url)) return { value: merged, cleared: false };
  return { value: { ...merged, password: null } as T, cleared: true };
}
