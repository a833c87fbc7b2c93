import { z } from 'zod';
import { badRequest, type FieldError } from '../lib/errors.ts';
import { jsonEqual } from '../lib/json.ts';
import { zodErrors } from '../lib/validation.ts';

// Replacing and patching a resource (docs/api.md 4.12): PUT takes the body GET
// answers, so `curl $B/... | jq '.name = "x"' | curl -X PUT ...` works, and PATCH takes a JSON
// merge patch (RFC 7396). Read-only fields may be sent back: equal to the stored value they are
// ignored, different they are a 400 naming each and saying where that state moves instead
// (enabled, binding and position change only through their own endpoints, docs/api.md 3).

/** Media types a PATCH body may have: RFC 7396's own, and plain JSON for curl users. */
export const MERGE_PATCH_TYPES = ['application/merge-patch+json', 'application/json'] as const;

/** True when the Content-Type header names one of `types` (parameters such as charset ignored). */
export function hasMediaType(header: string | undefined, types: readonly string[]): boolean {
  if (!header) return false;
  return types.includes(header.split(';')[0].trim().toLowerCase());
}

/** A PATCH body: a JSON object (RFC 7396 allows any value, but this API's resources are objects). */
export const MergePatchBody = z.record(z.string(), z.unknown(), { error: 'a merge patch must be a JSON object: the members to change, null to remove one' })
  .describe('JSON merge patch (RFC 7396): members given replace the current ones, objects merge member by member, null removes a member, arrays are replaced whole');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7396 section 2: the target with the patch applied. Neither argument is modified. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    // defineProperty: a member named "__proto__" stays a member (and is refused as unknown).
    else Object.defineProperty(result, key, { value: mergePatch(result[key], value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

export interface ReadOnlyField {
  /** The value's shape in a request (documentation, and a type check). */
  schema: z.ZodType;
  /** Where the value is changed instead, for the 400 ("use POST /api/interfaces/{id}/enable or /disable"). */
  moves?: string;
  /** A view of the moment the body was read (link state, what a device reports): accepted and
   *  ignored whatever it holds, since it changes on its own between GET and PUT. */
  volatile?: boolean;
}

/** The read-only fields as optional members of a PUT body schema. */
export function readOnlyShape(fields: Record<string, ReadOnlyField>): Record<string, z.ZodType> {
  return Object.fromEntries(
    Object.entries(fields).map(([name, f]) => [
      name,
      f.schema.optional().describe(f.volatile ? 'Read-only, a view of the moment: accepted and ignored' : 'Read-only: ignored when equal to the stored value, refused (400) when different'),
    ]),
  );
}

// Times compare as instants: "2026-01-01T00:00:00Z" is the stored "2026-01-01T00:00:00.000Z".
const same = (a: unknown, b: unknown) =>
  jsonEqual(a, b) || (typeof a === 'string' && typeof b === 'string' && Number.isFinite(Date.parse(a)) && Date.parse(a) === Date.parse(b) && /T/.test(a) && /T/.test(b));

/** One error per read-only member of `body` whose value differs from the stored resource. */
export function readOnlyErrors(body: Record<string, unknown>, stored: Record<string, unknown>, fields: Record<string, ReadOnlyField>, what: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, field] of Object.entries(fields)) {
    if (!Object.hasOwn(body, name) || body[name] === undefined || field.volatile) continue;
    if (same(body[name], stored[name])) continue;
    const why = name === 'updated_at'
      ? `the ${what} changed since this body was read (stored ${JSON.stringify(stored[name])}, this request ${JSON.stringify(body[name])}): GET it again and reapply the change`
      : `it is ${JSON.stringify(stored[name])} and this request says ${JSON.stringify(body[name])}${field.moves ? `; ${field.moves}` : ''}`;
    errors.push({ path: `body.${name}`, message: `${name} is read-only: ${why}` });
  }
  return errors;
}

/** PUT: refuses read-only members that differ from the stored resource; answers the writable ones. */
export function checkReplace<T extends Record<string, unknown>>(body: T, stored: Record<string, unknown>, fields: Record<string, ReadOnlyField>, what: string): T {
  fail(readOnlyErrors(body, stored, fields, what));
  return writablePart(body, fields) as T;
}

/**
 * PATCH: applies the merge patch to the writable fields as GET shows them (`current`) and
 * validates the result as a PUT would (`schema`, errors named body.<field>), together with the
 * read-only members of the patch, and what `check` finds. `nullable`: fields where a member the patch removes means
 * null (a rule's schedule: "always"), rather than missing.
 */
export function applyPatch<W>(options: {
  patch: Record<string, unknown>;
  current: Record<string, unknown>;
  stored: Record<string, unknown>;
  readOnly: Record<string, ReadOnlyField>;
  schema: z.ZodType<W>;
  what: string;
  nullable?: readonly string[];
  /** Checks the schema cannot make (an interface's settings against its kind), reported with the rest. */
  check?: (merged: Record<string, unknown>) => FieldError[];
}): W {
  const { patch, readOnly } = options;
  const errors = readOnlyErrors(patch, options.stored, readOnly, options.what);
  const merged = mergePatch(options.current, writablePart(patch, readOnly)) as Record<string, unknown>;
  for (const name of options.nullable ?? []) if (patch[name] === null) merged[name] = null;
  const result = options.schema.safeParse(merged);
  if (!result.success) errors.push(...zodErrors(result.error, 'body'));
  if (options.check) errors.push(...options.check(merged).filter((e) => !errors.some((known) => known.path === e.path)));
  fail(errors);
  return result.data as W;
}

function writablePart(body: Record<string, unknown>, fields: Record<string, ReadOnlyField>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([name]) => !Object.hasOwn(fields, name)));
}

function fail(errors: FieldError[]): void {
  // The same wording as the HTTP kernel's schema errors (server.ts).
  if (errors.length > 0) throw badRequest(`invalid request: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}
