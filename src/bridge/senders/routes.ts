import { z } from 'zod';
import { PageQuery } from '../../http/paging.ts';
import { ADMIN, ANY_KEY, Reply, route, type Route } from '../../http/route.ts';
import { strictQuery } from '../../http/query.ts';
import { badRequest, notFound } from '../../lib/errors.ts';
import { senderKey } from './address.ts';
import { SenderPolicy } from './policy.ts';
import type { SenderService } from './service.ts';

// Senders (docs/senders.md): the policy, the per-sender counters, and block,
// unblock and reset of one sender.

const Sender = z.object({
  address: z.string().describe('Canonical: a Meshtastic node as !%08x, a phone number in E.164, others lower-cased'),
  messages_in: z.number().int().describe('Messages heard from it'),
  forwards: z.number().int().describe('Of those, forwarded'),
  limited: z.number().int().describe('Stored, not forwarded: over a limit'),
  blocked: z.number().int().describe('Dropped: blocked (blocklist or not on the allowlist)'),
  first_seen_at: z.iso.datetime(),
  last_seen_at: z.iso.datetime(),
  blocked_now: z.string().nullable().describe('Why the policy blocks it now; null when it does not'),
});

const Address = z.object({ address: z.string().min(1).max(128) });

/** The cursor is the last address of the page (addresses are the key, not ids). */
const cursorOf = (address: string) => Buffer.from(address, 'utf8').toString('base64url');
function afterOf(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const address = Buffer.from(cursor, 'base64url').toString('utf8');
  if (address.length === 0 || address.length > 128 || cursorOf(address) !== cursor) throw badRequest('query.cursor is not a cursor this API gave out', [{ path: 'query.cursor', message: 'unknown cursor' }]);
  return address;
}

export function senderRoutes(senders: SenderService): Route[] {
  const tags = ['senders'];
  const one = (address: string) => {
    const row = senders.store.get(address);
    if (!row) throw notFound('sender', address);
    return senders.view(row);
  };
  return [
    route({
      method: 'GET', path: '/api/senders/policy', summary: 'The senders policy: limits, blocklist, allowlist', tags, roles: ANY_KEY,
      response: SenderPolicy, responseName: 'SenderPolicy', handler: () => senders.policy(),
    }),
    route({
      method: 'PUT', path: '/api/senders/policy', summary: 'Replace the senders policy (applies to the next message)', tags, roles: ADMIN,
      body: SenderPolicy, bodyName: 'SenderPolicyInput', response: SenderPolicy, responseName: 'SenderPolicy',
      handler: ({ body }) => senders.setPolicy(body),
    }),
    route({
      method: 'GET', path: '/api/senders', summary: 'Senders heard, by address, with their counters', tags, roles: ANY_KEY,
      query: strictQuery({ ...PageQuery, q: z.string().min(1).max(128).optional().describe('Address contains (ASCII case ignored)') }),
      response: z.object({ items: z.array(Sender), next_cursor: z.string().nullable() }), responseName: 'SenderPage',
      handler: (ctx) => {
        const q = ctx.query;
        const rows = senders.store.list(afterOf(q.cursor), q.q, q.limit + 1);
        const items = rows.slice(0, q.limit).map((r) => senders.view(r));
        const next = rows.length > q.limit ? cursorOf(items[items.length - 1].address) : null;
        return new Reply(200, { items, next_cursor: next }, next ? { Link: `<${ctx.urlWith({ cursor: next })}>; rel="next"` } : {});
      },
    }),
    route({
      method: 'GET', path: '/api/senders/{address}', summary: 'One sender\'s counters', tags, roles: ANY_KEY,
      params: Address, response: Sender, responseName: 'Sender', handler: ({ params }) => one(params.address),
    }),
    route({
      method: 'POST', path: '/api/senders/{address}/block', summary: 'Put the address on the blocklist: its messages are dropped, never forwarded', tags, roles: ADMIN,
      params: Address, response: SenderPolicy, responseName: 'SenderPolicy', handler: ({ params }) => senders.block(params.address),
    }),
    route({
      method: 'POST', path: '/api/senders/{address}/unblock', summary: 'Take the address off the blocklist; 409 when a group on the blocklist or the allowlist still blocks it', tags, roles: ADMIN,
      params: Address, response: SenderPolicy, responseName: 'SenderPolicy', errors: [409], handler: ({ params }) => senders.unblock(params.address),
    }),
    route({
      method: 'POST', path: '/api/senders/{address}/reset', summary: 'Refill every limit of the sender: its next messages may be forwarded at once', tags, roles: ADMIN,
      params: Address, response: z.object({ address: z.string(), buckets_reset: z.number().int() }), responseName: 'SenderReset',
      handler: ({ params }) => ({ address: senderKey(params.address), buckets_reset: senders.reset(params.address) }),
    }),
  ];
}
