import { z } from 'zod';
import { PortValueSchema } from '../../bearers/links/port-value.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { DEFAULT_RETRY_POLICY, RetryPolicy } from '../deliveries/backoff.ts';
import { DRIVERS, INTERFACE_KINDS } from '../../bearers/drivers.ts';
import type { InterfaceService } from './service.ts';
import { TransformPipeline } from './transforms.ts';

export const InterfaceName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a lowercase slug: letters, digits, "-" and "_", 1-63 characters, starting with a letter or digit');

const Kind = z.enum(INTERFACE_KINDS);
const Settings = z.record(z.string(), z.unknown()).describe('Kind-specific settings (see docs/routing.md); validated against the kind');

const CreateInterface = z.strictObject({
  name: InterfaceName,
  kind: Kind,
  enabled: z.boolean().default(true),
  device: PortValueSchema.nullable().default(null).describe('A port value; null leaves the interface unbound'),
  settings: Settings.default({}),
  transforms: TransformPipeline.default({ inbound: [], outbound: [] }),
  retry: RetryPolicy.default(DEFAULT_RETRY_POLICY),
});

// PUT replaces the writable fields and, like a create, needs all of them: a missing field is a
// 400, never a silent default. enabled and device move only through their own endpoints.
const ReplaceInterface = z.strictObject({
  name: InterfaceName,
  settings: Settings,
  transforms: TransformPipeline,
  retry: RetryPolicy,
});

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
});

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
  queue_depth: z.number().int().describe('Deliveries waiting for this interface (pending, retrying or sending)'),
  counters: z.object({ sent: z.number().int(), failed: z.number().int(), received: z.number().int(), duplicates: z.number().int().describe('Repeated frames (same sender and packet id within 24 h) dropped, not stored') }),
  device: z.record(z.string(), z.unknown()).describe('What the device reports, as GET /api/interfaces/{id}/stats answers it in `stats` ({} for a kind that reports nothing)'),
});

const Ref = z.object({ id: z.string().min(1).describe('Interface id or name') });

// One shape per kind: the link state every interface has, and the values its driver reports
// (the driver module's stats schema; {} for a kind that reports none yet).
const NoStats = z.object({}).describe('This kind reports no values yet');
const InterfaceStats = z.discriminatedUnion(
  'kind',
  DRIVERS.map((d) =>
    z.object({
      id: z.string(),
      name: z.string(),
      kind: z.literal(d.kind),
      connected: z.boolean(),
      phase: z.string(),
      last_error: z.string().nullable(),
      stats: d.stats?.schema ?? NoStats,
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

export function interfaceRoutes(service: InterfaceService): Route[] {
  const tags = ['interfaces'];
  const one = (summary: string, path: string, act: (ref: string) => Promise<Parameters<InterfaceService['view']>[0]>): Route =>
    route({ method: 'POST', path, summary, tags, roles: ADMIN, params: Ref, response: InterfaceView, responseName: 'Interface', handler: async ({ params }) => service.view(await act(params.id)) });
  return [
    route({
      method: 'GET', path: '/api/interfaces', summary: 'List interfaces', tags, roles: ANY_KEY,
      response: z.object({ items: z.array(InterfaceView), next_cursor: z.null() }), responseName: 'InterfaceList',
      handler: () => ({ items: service.list().map((r) => service.view(r)), next_cursor: null }),
    }),
    route({
      method: 'POST', path: '/api/interfaces', summary: 'Create an interface', tags, roles: ADMIN, status: 201, errors: [409],
      body: CreateInterface, bodyName: 'CreateInterface', response: InterfaceView, responseName: 'Interface',
      handler: async ({ body }) => service.view(await service.create(body)),
    }),
    route({
      method: 'GET', path: '/api/interfaces/health', summary: 'Health of every interface', tags, roles: ANY_KEY,
      response: z.object({ items: z.array(Health) }), responseName: 'InterfaceHealthList',
      handler: () => ({ items: service.list().map((r) => service.health(r)) }),
    }),
    route({
      method: 'GET', path: '/api/interfaces/{id}', summary: 'One interface', tags, roles: ANY_KEY, params: Ref,
      response: InterfaceView, responseName: 'Interface',
      handler: ({ params }) => service.view(service.get(params.id)),
    }),
    route({
      method: 'PUT', path: '/api/interfaces/{id}', summary: 'Replace an interface\'s name, settings, transforms and retry policy', tags, roles: ADMIN, errors: [409],
      params: Ref, body: ReplaceInterface, bodyName: 'ReplaceInterface', response: InterfaceView, responseName: 'Interface',
      handler: async ({ params, body }) => service.view(await service.update(params.id, body)),
    }),
    route({
      method: 'DELETE', path: '/api/interfaces/{id}', summary: 'Delete an interface with the rules that name it and its pipeline', tags, roles: ADMIN, params: Ref,
      response: z.object({ id: z.string(), removed_rule_ids: z.array(z.string()) }), responseName: 'InterfaceDeleted',
      handler: ({ params }) => service.delete(params.id),
    }),
    one('Enable: traffic resumes', '/api/interfaces/{id}/enable', (ref) => service.setEnabled(ref, true)),
    one('Disable: traffic stops both ways; configuration is kept', '/api/interfaces/{id}/disable', (ref) => service.setEnabled(ref, false)),
    route({
      method: 'POST', path: '/api/interfaces/{id}/bind', summary: 'Attach a physical device (a port value)', tags, roles: ADMIN,
      params: Ref, body: z.strictObject({ device: PortValueSchema }), bodyName: 'BindInterface', response: InterfaceView, responseName: 'Interface',
      handler: async ({ params, body }) => service.view(await service.bind(params.id, body.device)),
    }),
    one('Detach the device; the interface, its rules and pipeline stay', '/api/interfaces/{id}/unbind', (ref) => service.unbind(ref)),
    route({
      method: 'GET', path: '/api/interfaces/{id}/stats', summary: 'The values the interface\'s device reports, as its driver defines them, with the link state', tags, roles: ANY_KEY,
      params: Ref, response: InterfaceStats, responseName: 'InterfaceStats',
      handler: ({ params }) => service.stats(service.get(params.id)),
    }),
  ];
}
