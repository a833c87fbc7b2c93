import { z } from 'zod';
import type { FrameKind, InboundFrame } from '../bearer.ts';
import { ADMIN, Reply, route, type Route } from '../../http/route.ts';
import { badRequest, conflict, notFound, unauthorized, unavailable } from '../../lib/errors.ts';
import type { DriverApi, DriverInterface } from '../driver-module.ts';
import { runningWebhook } from './driver.ts';
import { addHook, HOOK_NAME, readHooks, removeHook, type StoredHook, tokenMatches, touchHook } from './hooks.ts';

// Inbound hooks (docs/webhooks.md, "Inbound hooks"): an admin makes a named hook on a webhook
// interface and gets its token once; whoever holds the token posts messages to
// /api/hooks/{name}, which the interface reports as heard, so the access rules route them.
// The token opens that one door: it is no API key, and API keys do not open it.

const tags = ['hooks'];
const Name = z.string().regex(HOOK_NAME, 'a hook name is 1 to 64 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit');
const NameParam = z.object({ name: Name.describe('The hook\'s name') });

const Hook = z.object({
  name: z.string(),
  interface_id: z.string().describe('The webhook interface its messages are heard on'),
  interface_name: z.string(),
  url: z.string().describe('Where to post: the path on this bridge'),
  created_at: z.string(),
  last_used_at: z.string().nullable().describe('Last accepted post (to the minute)'),
});
const HookCreated = Hook.extend({ token: z.string().describe('The hook\'s token: shown this once, kept only as a digest. Send it as "Authorization: Bearer <token>"') });

const CreateHook = z.strictObject({
  name: Name,
  interface: z.string().min(1).describe('The webhook interface (id or name) its messages are heard on'),
});

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').refine((s) => s.length % 4 === 0, 'must be base64 (length a multiple of 4)');
const FRAME_KINDS = ['text', 'position', 'telemetry', 'data'] as const satisfies readonly FrameKind[];

export const HookMessage = z
  .strictObject({
    from: z.string().trim().min(1).max(128).describe('The sender, as the rules match it (match.from)'),
    text: z.string().min(1).max(65536).optional(),
    payload_b64: base64.optional().describe('Bytes instead of text, base64'),
    to: z.string().trim().min(1).max(128).optional().describe('The address it was sent to, as rules match it (match.to); default broadcast'),
    channel: z.number().int().min(0).max(255).nullable().default(null),
    kind: z.enum(FRAME_KINDS).optional().describe('Default: text with text, data with payload_b64'),
    id: z.string().min(1).max(128).optional().describe('The sender\'s id of this message: a repeat within 24 hours is accepted and not stored twice'),
  })
  .superRefine((b, ctx) => {
    if ((b.text === undefined) === (b.payload_b64 === undefined)) ctx.addIssue({ code: 'custom', path: ['text'], message: 'give exactly one of text or payload_b64' });
    if (b.kind === 'text' && b.text === undefined) ctx.addIssue({ code: 'custom', path: ['kind'], message: 'kind text needs text' });
  })
  .describe('A message for the router, as if heard on the hook\'s interface');
export type HookMessage = z.infer<typeof HookMessage>;

const Accepted = z.object({ accepted: z.literal(true), hook: z.string(), interface_id: z.string() });

export function frameOf(name: string, b: HookMessage): InboundFrame {
  const payload = b.payload_b64 !== undefined ? new Uint8Array(Buffer.from(b.payload_b64, 'base64')) : new TextEncoder().encode(b.text);
  return {
    from: b.from,
    to: b.to ?? 'broadcast',
    channel: b.channel,
    kind: b.kind ?? (b.text !== undefined ? 'text' : 'data'),
    text: b.text ?? null,
    payload,
    meta: { hook: name },
    ...(b.id === undefined ? {} : { dedupeKey: `hook:${name}:${b.id}` }),
  };
}

/** The token of an `Authorization: Bearer` header (RFC 6750 2.1), or null. */
function presented(header: string | undefined): string | null {
  const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
  return m ? m[1] : null;
}

export function webhookRoutes(api: DriverApi): Route[] {
  const all = (): Array<{ iface: DriverInterface; hook: StoredHook }> =>
    api.list().flatMap((iface) => readHooks(api.state(iface.id)).map((hook) => ({ iface, hook })));
  const find = (name: string) => all().find((h) => h.hook.name === name);
  const view = ({ iface, hook }: { iface: DriverInterface; hook: StoredHook }) => ({
    name: hook.name, interface_id: iface.id, interface_name: iface.name, url: `/api/hooks/${hook.name}`, created_at: hook.created_at, last_used_at: hook.last_used_at,
  });
  const nowIso = () => new Date(api.now()).toISOString();
  const refused = () => unauthorized('ERR_HOOK_TOKEN', 'this hook needs its own token: send "Authorization: Bearer <hook token>" (an API key does not open a hook; a revoked hook has no token)');

  return [
    route({
      method: 'GET', path: '/api/hooks', summary: 'Inbound hooks: their names, interfaces and last use (never their tokens)', tags, roles: ADMIN,
      response: z.object({ items: z.array(Hook) }), responseName: 'HookList',
      handler: () => ({ items: all().map(view) }),
    }),
    route({
      method: 'POST', path: '/api/hooks', summary: 'Make an inbound hook on a webhook interface; its token is shown once', tags, roles: ADMIN, status: 201, errors: [404, 409],
      description: 'The token is made by the bridge and kept only as a SHA-256 digest: write it down from this answer. A lost token is replaced by deleting the hook and making it again. Hooks belong to their interface (deleted with it) and are not part of a configuration export.',
      body: CreateHook, bodyName: 'CreateHook', response: HookCreated, responseName: 'HookCreated',
      handler: ({ body }) => {
        const iface = api.get(body.interface);
        if (find(body.name)) throw conflict('ERR_HOOK_EXISTS', `a hook named '${body.name}' exists; delete it first to give it a new token`);
        const token = addHook(api.state(iface.id), body.name, nowIso());
        const made = find(body.name);
        if (!made) throw badRequest(`the hook '${body.name}' could not be kept`);
        return { ...view(made), token };
      },
    }),
    route({
      method: 'DELETE', path: '/api/hooks/{name}', summary: 'Revoke an inbound hook: its token opens nothing from now on', tags, roles: ADMIN, params: NameParam, status: 204,
      handler: ({ params }) => {
        const found = find(params.name);
        if (!found || !removeHook(api.state(found.iface.id), params.name)) throw notFound('hook', params.name);
        return new Reply(204, undefined);
      },
    }),
    route({
      method: 'POST', path: '/api/hooks/{name}', summary: 'Post a message through an inbound hook, with the hook\'s token (not an API key)', tags, roles: 'public', params: NameParam,
      status: 202, errors: [401, 409, 503],
      description: 'Authorization: Bearer <hook token>. The message enters the router as if heard on the hook\'s webhook interface, so the access rules route it. '
        + '202 once it is stored. 401 for a wrong, revoked or missing token (an API key included); 409 while the interface is not running (disabled or unbound); 503 when it could not be stored (try again).',
      body: HookMessage, bodyName: 'HookMessage', response: Accepted, responseName: 'HookAccepted',
      handler: async ({ params, body, req }) => {
        const token = presented(req.headers.authorization);
        const found = find(params.name);
        // An unknown hook and a wrong token answer alike: the answer tells no one which hooks exist.
        if (!token || !found || !tokenMatches(found.hook, token)) throw refused();
        const bearer = runningWebhook(found.iface.id);
        if (!bearer) throw conflict('ERR_HOOK_INTERFACE_DOWN', `the hook's interface '${found.iface.name}' is not running (enable it and bind it to auto)`);
        if (!(await bearer.hear(frameOf(params.name, body)))) {
          throw unavailable('ERR_HOOK_NOT_STORED', 'the message could not be stored; send it again', 1);
        }
        touchHook(api.state(found.iface.id), params.name, nowIso());
        return { accepted: true as const, hook: params.name, interface_id: found.iface.id };
      },
    }),
  ];
}
