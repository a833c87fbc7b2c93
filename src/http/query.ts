import { z } from 'zod';

// Query parameters: a route reads the parameters its query schema names and no
// others. A route without a query schema gets NO_QUERY, so a typo (`?befor=`) or a parameter the
// route does not have is a 400 naming it, never silently ignored (`DELETE /api/messages?before=`
// once deleted everything because the parameter was not read).

const quoted = (keys: readonly string[]) => keys.map((k) => `"${k}"`).join(', ');

/** Refuses any query parameter: the schema of every route that declares none. */
export const NO_QUERY = z.strictObject({}, {
  error: (issue) => (issue.code === 'unrecognized_keys' ? `this endpoint takes no query parameters; got ${quoted(issue.keys)}` : undefined),
});

/** A route's query schema: these parameters and no others; the refusal lists the ones it takes. */
export function strictQuery<T extends z.ZodRawShape>(shape: T) {
  const names = quoted(Object.keys(shape));
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown query parameter ${quoted(issue.keys)}; this endpoint takes ${names}` : undefined),
  });
}

/** The small collections (interfaces, rules, contacts, groups) answer every item at once:
 *  ?limit= and ?cursor= are refused rather than ignored (docs/decisions.md). */
export const NOT_PAGED = z.strictObject({}, {
  error: (issue) => (issue.code === 'unrecognized_keys'
    ? `this list is not paged: it answers every item at once (next_cursor is always null) and takes no query parameters; got ${quoted(issue.keys)}`
    : undefined),
}).describe('Not paged: every item, next_cursor null');

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A point in time in a query: a plain date (midnight UTC) or an ISO 8601 time with `Z` or an
 * offset, with or without fractions. It parses to the stored form (UTC, milliseconds, `Z`),
 * because stored times are compared as text: "12:01:00Z" would sort after "12:01:00.500Z".
 */
export function isoTimeQuery(field: string) {
  const message = `${field} must be a date such as 2026-11-22 (midnight UTC) or a time such as 2026-11-22T08:00:00Z (ISO 8601; an offset such as +01:00 instead of Z is accepted)`;
  const time = z.iso.datetime({ offset: true });
  return z.string({ error: message }).transform((value, ctx) => {
    const date = DATE.exec(value);
    if (date) {
      const ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
      const iso = new Date(ms).toISOString();
      // 2026-02-30 would roll over into March: refused instead.
      if (Number.isFinite(ms) && iso.startsWith(value)) return iso;
    } else if (time.safeParse(value).success) {
      return new Date(value).toISOString();
    }
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  }).describe("A date (2026-11-22: midnight UTC) or an ISO 8601 time (2026-11-22T08:00:00Z, or with an offset)");
}
