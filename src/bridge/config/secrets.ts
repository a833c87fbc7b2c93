import { isJsonObject } from '../../lib/json.ts';
// Secrets in configuration sections (docs/design.md section 5: a secret is never shown again once
// stored). Reads replace each set secret with a marker; a write (or, later, an import) that
// carries the marker back means "keep what is stored", so a section can be read, edited and
// written back without knowing its secrets.

export const REDACTION_MARKER = '<redacted>';

/** Top-level fields holding secrets, per section. A null secret is shown as null (not set). */
export const SECRET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  hub: ['password', 'enrollment_token'],
};

type Fields = Record<string, unknown>;

/** A copy of a section value with every set secret replaced by the marker. */
export function redactSecrets<T>(section: string, value: T): T {
  return redactFields(value, SECRET_FIELDS[section]);
}

/** A copy of `value` with each of `secrets` that is set replaced by the marker. */
export function redactFields<T>(value: T, secrets: readonly string[] | undefined): T {
  if (!secrets || secrets.length === 0 || !isJsonObject(value)) return value;
  const copy: Fields = { ...value };
  for (const field of secrets) {
    if (copy[field] !== null && copy[field] !== undefined) copy[field] = REDACTION_MARKER;
  }
  return copy as T;
}

/** Every section of a configuration object, redacted. */
export function redactSections<T extends Fields>(sections: T): T {
  const out: Fields = {};
  for (const [name, value] of Object.entries(sections)) out[name] = redactSecrets(name, value);
  return out as T;
}

/**
 * Puts the stored secret back wherever the incoming value carries the marker. `missing` lists
 * the fields that carried the marker while nothing was stored: the caller refuses those rather
 * than storing the marker itself as a password.
 */
export function restoreSecrets<T>(section: string, incoming: T, stored: unknown): { value: T; missing: string[] } {
  return restoreFields(incoming, stored, SECRET_FIELDS[section]);
}

/** restoreSecrets for any list of fields (an interface kind's secret settings). */
export function restoreFields<T>(incoming: T, stored: unknown, secrets: readonly string[] | undefined): { value: T; missing: string[] } {
  if (!secrets || secrets.length === 0 || !isJsonObject(incoming)) return { value: incoming, missing: [] };
  const copy: Fields = { ...incoming };
  const missing: string[] = [];
  for (const field of secrets) {
    if (copy[field] !== REDACTION_MARKER) continue;
    const kept = isJsonObject(stored) ? stored[field] : undefined;
    if (kept === null || kept === undefined || kept === REDACTION_MARKER) missing.push(field);
    else copy[field] = kept;
  }
  return { value: copy as T, missing };
}
