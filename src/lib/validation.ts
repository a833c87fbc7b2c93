import type { z } from 'zod';
import type { FieldError } from './errors.ts';

// Validation errors as the API reports them: one { path, message } per problem, the path
// written the way a user would point at the field (body.settings.sf, items[2].name).

export function zodErrors(error: z.ZodError, where: string): FieldError[] {
  return error.issues.map((issue) => ({ path: formatPath(where, issue.path), message: issue.message }));
}

export function formatPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out;
}
