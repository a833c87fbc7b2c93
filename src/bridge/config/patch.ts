import { z } from 'zod';
import { isJsonObject } from '../../lib/json.ts';

// Settings writes are patches: the fields sent replace the stored ones, the rest stay, and
// the merged section is then validated whole by its schema. A patch schema is the section
// schema with its defaults removed and every field optional (so a missing field means "keep",
// never "reset to default"), recursing into nested objects. Object-level refinements are not
// carried over: they run on the merged value.

export function patchSchema(schema: z.ZodObject): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    let inner: z.ZodType = field;
    while (inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault) inner = inner.unwrap() as z.ZodType;
    if (inner instanceof z.ZodObject) inner = patchSchema(inner);
    const description = field.description ?? inner.description;
    let optional: z.ZodType = inner.optional();
    if (description) optional = optional.describe(description);
    shape[key] = optional;
  }
  return z.strictObject(shape);
}

type Json = Record<string, unknown>;

/** current overlaid with patch: plain objects merge field by field; arrays, scalars and null replace. */
export function mergePatch<T>(current: T, patch: unknown): T {
  if (!isJsonObject(current) || !isJsonObject(patch)) return (patch === undefined ? current : patch) as T;
  const out: Json = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    out[key] = isJsonObject(value) && isJsonObject(out[key]) ? mergePatch(out[key], value) : value;
  }
  return out as T;
}
