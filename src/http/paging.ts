import { z } from 'zod';
import { badRequest } from '../lib/errors.ts';
import { Reply, type RequestContext } from './route.ts';

// Keyset pagination (docs/design.md section 5): `?limit=` (default 100, max 1000) and an opaque
// `?cursor=`; the body is {items, next_cursor} and a Link rel="next" header points to the
// next page. Ids are time-sortable, so the cursor is simply the last id seen.

export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Items per page (1-1000)'),
  cursor: z.string().min(1).optional().describe('Opaque cursor from next_cursor of the previous page'),
};

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]{3}_[0-9A-Z]{26}$/.test(id)) throw badRequest('query.cursor is not a cursor this API gave out', [{ path: 'query.cursor', message: 'unknown cursor' }]);
  return id;
}

export function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable() });
}

/** Builds the page answer from limit+1 rows fetched in order. */
export function pageReply<T extends { id: string }>(ctx: RequestContext, rows: T[], limit: number): Reply {
  const items = rows.slice(0, limit);
  const next = rows.length > limit ? encodeCursor(items[items.length - 1].id) : null;
  const headers: Record<string, string> = {};
  if (next) headers.Link = `<${ctx.urlWith({ cursor: next })}>; rel="next"`;
  return new Reply(200, { items, next_cursor: next }, headers);
}
