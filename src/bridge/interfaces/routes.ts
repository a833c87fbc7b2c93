import { z } from 'zod';
import { PortValueSchema } from '../../bearers/shared/links/port-value.ts';
import { applyPatch, checkReplace, MERGE_PATCH_TYPES, MergePatchBody, type ReadOnlyField, readOnlyShape } from '../../http/merge-patch.ts';
import { NOT_PAGED, strictQuery } from '../../http/query.ts';
import type { NamedSchema } from '../../http/openapi.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { DEFAULT_RETRY_POLICY, RetryPolicy } from '../engine/backoff.ts';
import { DRIVERS, INTERFACE_KINDS } from '../../bearers/drivers.ts';
import type { InterfaceService } from './service.ts';
import { TransformPipeline } from '../engine/transforms.ts';

const SLUG = 'a lowercase slug: letters, digits, "-" and "_", 1-63 characters, starting with a letter or digit';
export const InterfaceName = z
  .string({ error: (issue) => (issue.input === undefined ? `name is required: ${SLUG}` : `name must be ${SLUG}`) })
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, `must be ${SLUG}`);

const Kind = z.enum(INTERFACE_KINDS);
const Settings = z.record(z.string(), z.unknown()).describe('Kind-specific settings, validated against the kind: the document lists each kind\'s under CreateInterface');

/** One variant of `base` per kind, discriminated by `kind`: what the document shows where a
 *  body's fields depend on the kind (its settings, what its device reports). */
function perKind(base: z.ZodObject, fields: (d: (typeof DRIVERS)[number]) => z.ZodRawShape) {
  const variants = DRIVERS.map((d) => base.extend({ kind: z.literal(d.kind), ...fields(d) }));
  return z.discriminatedUnion('kind', variants as unknown as [z.ZodObject, ...z.ZodObject[]]);
}

const CreateInterface = z.strictObject({
  name: InterfaceName,
  kind: Kind,
  enabled: z.boolean().default(true),
  device: PortValueSchema.nullable().default(null).describe('A port value; null leaves the interface unbound'),
  settings: Settings.default({}),
  transforms: TransformPipeline.default({ inbound: [], outbound: [] }),
  retry: RetryPolicy.default(DEFAULT_RETRY_POLICY),
});
// The create body as documented: the service checks the settings against the kind's schema
// (after restoring secrets written back as the marker), the same schema each variant names.
const CreateInterfaceDocumented = perKind(CreateInterface, (d) => ({ settings: d.settings.default({}) }));

// PUT replaces the writable fields and, like a create, needs all of them: a missing field is a
// 400, never a silent default. enabled and device move only through their own endpoints.
const WRITABLE = {
  name: InterfaceName,
  settings: Settings,
  transforms: TransformPipeline,
  retry: RetryPolicy,
};
const ReplaceWritable = z.strictObject(WRITABLE);

const InterfaceState = z.object({
  bound: z.boolean(),
  connected: z.boolean(),
  phase: z.string().describe('Driver lifecycle step: closed, opening, detecting, configuring, verifying, online, backoff, unbound, disabled'),
  last_error: z.string().nullable(),
  last_rx_at: z.iso.datetime().nullable(),
  last_tx_at: z.iso.datetime().nullable(),
});

export const InterfaceView = z.object({
  id: z.string(),
  name: z.string(),
  kind: Kind,
  enabled: z.boolean(),
  device: z.string().nullable(),
  settings: z.record(z.string(), z.unknown()),
  transforms: TransformPipeline,
  retry: RetryPolicy,
  state: InterfaceState,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  warnings: z.array(z.string()).optional().describe('Create and bind only, when there is something to know: a kind without a driver in this release'),
});


// What GET answers beyond the writable fields: PUT and PATCH accept them back (docs/api.md 4.12).
const READ_ONLY: Record<string, ReadOnlyField> = {
  id: { schema: z.string() },
  kind: { schema: Kind, moves: 'an interface keeps its kind: create a new one for another kind' },
  enabled: { schema: z.boolean(), moves: 'use POST /api/interfaces/{id}/enable or /disable' },
  device: { schema: z.string().nullable(), moves: 'use POST /api/interfaces/{id}/bind or /unbind' },
  created_at: { schema: z.string() },
  updated_at: { schema: z.string() },
  state: { schema: z.unknown(), volatile: true },
  reported: { schema: z.unknown(), volatile: true },
  warnings: { schema: z.unknown(), volatile: true },
};

// The body GET answers is accepted: the writable fields, and the read-only ones equal
// to the stored values.
const ReplaceInterface = z.strictObject({ ...WRITABLE, ...readOnlyShape(READ_ONLY) });
// As documented: the settings are those of the interface's kind (its `kind` may be left out of
// a PUT, so the document lists every kind's, anyOf; the service checks the stored kind's).
const ReplaceInterfaceDocumented = ReplaceInterface.extend({
  settings: z.union(DRIVERS.map((d) => d.settings) as unknown as [z.ZodType, ...z.ZodType[]]).describe('The settings of the interface\'s kind (CreateInterface shows which belong to which kind)'),
});

// What a kind's device reports: the driver module's stats schema ({} for a kind that reports none yet).
const NoStats = z.object({}).describe('This kind reports no values yet');
const reportedBy = (d: (typeof DRIVERS)[number]) => d.stats?.schema ?? NoStats;

const Health = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  enabled: z.boolean(),
  bound: z.boolean(),
  connected: z.boolean(),
  phase: z.string(),
  last_error: z.string().nullable(),
  last_rx_at: z.iso.datetime().nullable(),
  last_tx_at: z.iso.datetime().nullable(),
  queue_depth: z.number().int().describe('Deliveries waiting for this interface (pending, held, retrying or sending)'),
  queue: z.object({
    by_precedence: z.record(z.string(), z.number().int()).describe('Waiting deliveries per precedence, override to deferred'),
    held: z.number().int().describe('Held: the interface is down, or they wait until a node is heard'),
    evicted: z.number().int().describe('Evicted from a full queue to the dead letters (while the dead letters are kept)'),
  }),
  counters: z.object({ sent: z.number().int(), failed: z.number().int(), received: z.number().int(), duplicates: z.number().int().describe('Repeated frames (same sender and packet id within 24 h) dropped, not stored') }),
});

// One interface as GET /api/interfaces/{id} answers it: the stored fields (`device` is the port
// value) and what the device reports, `reported` (an Iridium interface's credits, an SMS
// modem's day budget; health calls the same values `device`).
const InterfaceDetail = perKind(InterfaceView, (d) => ({ reported: reportedBy(d) }));
const HealthOfKind = perKind(Health, (d) => ({ device: reportedBy(d) }));

// The link state every interface has, and the values its driver reports.
const InterfaceStats = perKind(
  z.object({ id: z.string(), name: z.string(), kind: Kind, connected: z.boolean(), phase: z.string(), last_error: z.string().nullable() }),
  (d) => ({ stats: reportedBy(d) }),
);

const Ref = z.object({ id: z.string().min(1).describe('Interface id or name') });
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each kind's settings and reported values as components of their own (MeshtasticSettings,
 *  IridiumInterfaceStats), which the per-kind bodies refer to. */
export function interfaceKindSchemas(): NamedSchema[] {
  const name = (d: (typeof DRIVERS)[number]) => d.title[0].toUpperCase() + d.title.slice(1).replace(/[^A-Za-z0-9]/g, '');
  return DRIVERS.flatMap((d) => [
    { name: `${name(d)}Settings`, schema: d.settings, io: 'input' as const },
    ...(d.stats ? [{ name: `${name(d)}InterfaceStats`, schema: d.stats.schema, io: 'output' as const }] : []),
  ]);
}

export function interfaceRoutes(service: InterfaceService): Route[] {
  const tags = ['interfaces'];
  const one = (summary: string, path: string, act: (ref: string) => Promise<Parameters<InterfaceService['view']>[0]>): Route =>
    route({ method: 'POST', path, summary, tags, roles: ADMIN, params: Ref, response: InterfaceView, responseName: 'Interface', handler: async ({ params }) => service.view(await act(params.id)) });
  return [
    route({
      method: 'GET', path: '/api/interfaces', summary: 'List interfaces (every one: not paged)', tags, roles: ANY_KEY, query: NOT_PAGED,
      response: z.object({ items: z.array(InterfaceView), next_cursor: z.null() }), responseName: 'InterfaceList',
      handler: () => ({ items: service.list().map((r) => service.view(r)), next_cursor: null }),
    }),
    route({
      method: 'POST', path: '/api/interfaces', summary: 'Create an interface', tags, roles: ADMIN, status: 201, errors: [409],
      body: CreateInterface, bodyDocumented: CreateInterfaceDocumented, bodyName: 'CreateInterface', response: InterfaceView, responseName: 'Interface',
      handler: async ({ body }) => service.withWarnings(await service.create(body)),
    }),
    route({
      method: 'GET', path: '/api/interfaces/health', summary: 'Health of every interface', tags, roles: ANY_KEY,
      response: z.object({ items: z.array(HealthOfKind) }), responseName: 'InterfaceHealthList',
      handler: () => ({ items: service.list().map((r) => service.health(r)) }),
    }),
    route({
      method: 'GET', path: '/api/interfaces/{id}', summary: 'One interface, with what its device reports', tags, roles: ANY_KEY, params: Ref,
      response: InterfaceDetail, responseName: 'InterfaceDetail',
      handler: ({ params }) => {
        const row = service.get(params.id);
        return { ...service.view(row), reported: service.stats(row).stats as Record<string, unknown> };
      },
    }),
    route({
      method: 'PUT', path: '/api/interfaces/{id}', summary: 'Replace an interface\'s name, settings, transforms and retry policy', tags, roles: ADMIN, errors: [409],
      description: 'Takes the body GET answers: read-only fields (id, kind, enabled, device, created_at, updated_at) are ignored when equal to the stored values and refused (400) when not; state and reported are ignored.',
      params: Ref, body: ReplaceInterface, bodyDocumented: ReplaceInterfaceDocumented, bodyName: 'ReplaceInterface', response: InterfaceView, responseName: 'Interface',
      handler: async ({ params, body }) => {
        const row = service.get(params.id);
        return service.view(await service.update(row.id, checkReplace(body, service.view(row), READ_ONLY, 'interface')));
      },
    }),
    route({
      method: 'PATCH', path: '/api/interfaces/{id}', summary: 'Change some of an interface\'s name, settings, transforms and retry policy (JSON merge patch, RFC 7396)', tags, roles: ADMIN, errors: [409],
      description: 'The patch is applied to the interface as GET shows it and the result is checked as a PUT: null removes a member (a setting falls back to its default); enabled and device are changed only through their own endpoints.',
      params: Ref, body: MergePatchBody, bodyName: 'MergePatch', bodyTypes: MERGE_PATCH_TYPES, response: InterfaceView, responseName: 'Interface',
      handler: async ({ params, body }) => {
        const row = service.get(params.id);
        const view = service.view(row);
        const input = applyPatch({
          patch: body, current: { name: view.name, settings: view.settings, transforms: view.transforms, retry: view.retry }, stored: view,
          readOnly: READ_ONLY, schema: ReplaceWritable, what: 'interface', // Settings are checked against the interface's kind with the other fields.
          check: (merged) => (isRecord(merged.settings) ? service.settingsErrors(row, merged.settings) : []),
        });
        return service.view(await service.update(row.id, input));
      },
    }),
    route({
      method: 'DELETE', path: '/api/interfaces/{id}', summary: 'Delete an interface and its pipeline; 409 naming what uses it (rules, waiting deliveries) unless ?cascade=true', tags, roles: ADMIN, params: Ref, errors: [409],
      description: 'An interface that rules name or deliveries wait for is kept (409 in-use, the rules by name and id, the count of deliveries) unless the query says cascade=true: then the rules go with it and the deliveries are cancelled. To swap a radio, bind the new device instead (POST /api/interfaces/{id}/bind): rules, pipeline and queue stay.',
      query: strictQuery({ cascade: z.enum(['true', 'false'], { error: 'cascade must be true or false' }).optional().describe('true: delete the rules that name the interface and cancel its waiting deliveries with it') }),
      response: z.object({
        id: z.string(), name: z.string(),
        removed_rule_ids: z.array(z.string()),
        removed_rules: z.array(z.object({ id: z.string(), name: z.string() })).describe('The rules removed with it (cascade), by id and name'),
        cancelled_deliveries: z.number().int().describe('Waiting deliveries cancelled with it (cascade)'),
      }), responseName: 'InterfaceDeleted',
      handler: ({ params, query }) => service.delete(params.id, query.cascade === 'true'),
    }),
    one('Enable: traffic resumes', '/api/interfaces/{id}/enable', (ref) => service.setEnabled(ref, true)),
    one('Disable: traffic stops both ways; configuration is kept', '/api/interfaces/{id}/disable', (ref) => service.setEnabled(ref, false)),
    route({
      method: 'POST', path: '/api/interfaces/{id}/bind', summary: 'Attach a physical device (a port value)', tags, roles: ADMIN,
      params: Ref, body: z.strictObject({ device: PortValueSchema }), bodyName: 'BindInterface', response: InterfaceView, responseName: 'Interface',
      handler: async ({ params, body }) => service.withWarnings(await service.bind(params.id, body.device)),
    }),
    one('Detach the device; the interface, its rules and pipeline stay', '/api/interfaces/{id}/unbind', (ref) => service.unbind(ref)),
    route({
      method: 'GET', path: '/api/interfaces/{id}/stats', summary: 'The values the interface\'s device reports, as its driver defines them, with the link state', tags, roles: ANY_KEY,
      params: Ref, response: InterfaceStats, responseName: 'InterfaceStats',
      handler: ({ params }) => service.stats(service.get(params.id)),
    }),
  ];
}
