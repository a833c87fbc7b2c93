import { z } from 'zod';
import { applyPatch, checkReplace, MERGE_PATCH_TYPES, MergePatchBody, type ReadOnlyField, readOnlyShape } from '../../http/merge-patch.ts';
import { NOT_PAGED } from '../../http/query.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { InterfaceName } from '../interfaces/routes.ts';
import { PrecedenceSchema } from '../engine/precedence.ts';
import { NamedDestination, refineRuleAction, RULE_ACTION_FIELDS, RuleMatch, withoutInterfaceNames } from './match.ts';
import { Schedule, ScheduleOrNull } from './schedule.ts';
import type { RuleService } from './service.ts';
import type { RuleRow } from './store.ts';

// The smallest rule is a name and an action: match defaults to {} (matches
// everything) and schedule to null (always active).
const RuleBody = z
  .strictObject({
    name: InterfaceName,
    enabled: z.boolean({ error: 'enabled must be true or false' }).default(true).describe('Only on create; afterwards use /enable and /disable'),
    match: RuleMatch.default({}).describe('Every filter given must match; {} or left out matches everything'),
    schedule: ScheduleOrNull.default(null).describe('null or left out: always active'),
    ...RULE_ACTION_FIELDS,
  })
  .superRefine(refineRuleAction);

// PUT replaces every writable field and, like an interface's PUT, needs match and schedule: a
// replacement that left them out would silently widen the rule to every message at every time.
// The interface names a GET shows beside the ids are dropped before the destinations are checked.
const WRITABLE = {
  name: InterfaceName, schedule: ScheduleOrNull, ...RULE_ACTION_FIELDS,
  match: z.preprocess(withoutMatchNames, RuleMatch),
  destinations: z.preprocess((v) => (Array.isArray(v) ? v.map(withoutInterfaceNames) : v), RULE_ACTION_FIELDS.destinations),
};
const ReplaceWritable = z.strictObject(WRITABLE).superRefine(refineRuleAction);

// What GET answers beyond the writable fields: PUT and PATCH accept them back (docs/api.md 4.12).
const READ_ONLY: Record<string, ReadOnlyField> = {
  id: { schema: z.string() },
  enabled: { schema: z.boolean(), moves: 'use POST /api/access-rules/{id}/enable or /disable' },
  priority: { schema: z.number(), moves: 'use POST /api/access-rules/reorder' },
  created_at: { schema: z.string() },
  updated_at: { schema: z.string() },
};
const ReplaceRule = z.strictObject({ ...WRITABLE, ...readOnlyShape(READ_ONLY) }).superRefine(refineRuleAction);

const RuleView = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  priority: z.number().int().describe('1-based position in evaluation order; changed only by reorder'),
  match: RuleMatch.extend({
    interface_names: z.array(z.string().nullable()).optional().describe('The names of match.interfaces, in their order (null: deleted); ignored on write'),
  }),
  schedule: Schedule.nullable(),
  action: z.enum(['forward', 'drop', 'store']),
  destinations: z.array(NamedDestination).describe('Interface ids, as stored, each with the interface\'s name beside it'),
  precedence: PrecedenceSchema.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

const Stats = z.object({ id: z.string(), fired: z.number().int(), last_fired_at: z.iso.datetime().nullable() });
const Ref = z.object({ id: z.string().min(1).describe('Rule id or name') });

/** A match from an answer, without the interface names it showed (a PUT or PATCH of what GET said). */
function withoutMatchNames(match: unknown): unknown {
  if (typeof match !== 'object' || match === null || Array.isArray(match)) return match;
  const { interface_names: _n, ...rest } = match as Record<string, unknown>;
  return rest;
}

export function ruleRoutes(rules: RuleService): Route[] {
  const view = (r: RuleRow) => {
    const { fired: _f, last_fired_at: _l, ...rest } = r;
    return { ...rest, match: rules.namedMatch(r), destinations: rules.namedDestinations(r) };
  };
  const tags = ['access-rules'];
  const toggle = (enabled: boolean): Route =>
    route({
      method: 'POST', path: `/api/access-rules/{id}/${enabled ? 'enable' : 'disable'}`,
      summary: enabled ? 'Enable a rule: it behaves exactly as before, at the same position' : 'Disable a rule; it keeps its place in the order',
      tags, roles: ADMIN, params: Ref, response: RuleView, responseName: 'AccessRule',
      handler: ({ params }) => view(rules.setEnabled(params.id, enabled)),
    });
  return [
    route({
      method: 'GET', path: '/api/access-rules', summary: 'List rules in evaluation order (every one: not paged)', tags, roles: ANY_KEY, query: NOT_PAGED,
      response: z.object({ items: z.array(RuleView), next_cursor: z.null() }), responseName: 'AccessRuleList',
      handler: () => ({ items: rules.list().map(view), next_cursor: null }),
    }),
    route({
      method: 'POST', path: '/api/access-rules', summary: 'Create a rule; it lands last in the order', tags, roles: ADMIN, status: 201, errors: [409],
      body: RuleBody, bodyName: 'CreateAccessRule', response: RuleView, responseName: 'AccessRule',
      handler: ({ body }) => view(rules.create(body)),
    }),
    route({
      method: 'POST', path: '/api/access-rules/reorder', summary: 'Set the evaluation order: every rule id (or name) exactly once', tags, roles: ADMIN,
      body: z.strictObject({ order: z.array(z.string().min(1)) }), bodyName: 'ReorderAccessRules',
      response: z.object({ items: z.array(RuleView), next_cursor: z.null() }), responseName: 'AccessRuleList',
      handler: ({ body }) => ({ items: rules.reorder(body.order).map(view), next_cursor: null }),
    }),
    route({
      method: 'GET', path: '/api/access-rules/{id}', summary: 'One rule', tags, roles: ANY_KEY, params: Ref,
      response: RuleView, responseName: 'AccessRule',
      handler: ({ params }) => view(rules.get(params.id)),
    }),
    route({
      method: 'PUT', path: '/api/access-rules/{id}', summary: 'Replace a rule (its position and enabled flag stay)', tags, roles: ADMIN, params: Ref, errors: [409],
      description: 'Takes the body GET answers: read-only fields (id, enabled, priority, created_at, updated_at) are ignored when equal to the stored values and refused (400) when not.',
      body: ReplaceRule, bodyName: 'ReplaceAccessRule', response: RuleView, responseName: 'AccessRule',
      handler: ({ params, body }) => {
        const row = rules.get(params.id);
        return view(rules.update(row.id, checkReplace(body, view(row), READ_ONLY, 'access rule')));
      },
    }),
    route({
      method: 'PATCH', path: '/api/access-rules/{id}', summary: 'Change part of a rule (JSON merge patch, RFC 7396); its position and enabled flag stay', tags, roles: ADMIN, params: Ref, errors: [409],
      description: 'The patch is applied to the rule as GET shows it and the result is checked as a PUT. null removes a member: schedule null is always active, precedence null is routine, a filter removed from match matches everything.',
      body: MergePatchBody, bodyName: 'MergePatch', bodyTypes: MERGE_PATCH_TYPES, response: RuleView, responseName: 'AccessRule',
      handler: ({ params, body }) => {
        const row = rules.get(params.id);
        const current = view(row);
        const input = applyPatch({
          patch: body, stored: current, readOnly: READ_ONLY, schema: ReplaceWritable, what: 'access rule', nullable: ['schedule', 'precedence'],
          current: { name: current.name, match: current.match, schedule: current.schedule, action: current.action, destinations: current.destinations, precedence: current.precedence },
        });
        return view(rules.update(row.id, input));
      },
    }),
    route({
      method: 'DELETE', path: '/api/access-rules/{id}', summary: 'Delete a rule; a recreated one lands last', tags, roles: ADMIN, params: Ref, status: 204,
      handler: ({ params }) => {
        rules.delete(params.id);
        return undefined;
      },
    }),
    toggle(true),
    toggle(false),
    route({
      method: 'GET', path: '/api/access-rules/{id}/stats', summary: 'How often the rule has fired (kept across disable and enable)', tags, roles: ANY_KEY, params: Ref,
      response: Stats, responseName: 'AccessRuleStats',
      handler: ({ params }) => {
        const r = rules.get(params.id);
        return { id: r.id, fired: r.fired, last_fired_at: r.last_fired_at };
      },
    }),
  ];
}
