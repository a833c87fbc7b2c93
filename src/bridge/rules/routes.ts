import { z } from 'zod';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { InterfaceName } from '../interfaces/routes.ts';
import { refineRuleAction, RULE_ACTION_FIELDS, RuleMatch } from './match.ts';
import { Schedule } from './schedule.ts';
import type { RuleService } from './service.ts';
import type { RuleRow } from './store.ts';

const RuleBody = z
  .strictObject({
    name: InterfaceName,
    enabled: z.boolean().default(true).describe('Only on create; afterwards use /enable and /disable'),
    match: RuleMatch,
    schedule: Schedule.nullable().describe('null: always active'),
    ...RULE_ACTION_FIELDS,
  })
  .superRefine(refineRuleAction);

const ReplaceRule = z
  .strictObject({ name: InterfaceName, match: RuleMatch, schedule: Schedule.nullable(), ...RULE_ACTION_FIELDS })
  .superRefine(refineRuleAction);

const RuleView = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  priority: z.number().int().describe('1-based position in evaluation order; changed only by reorder'),
  match: RuleMatch,
  schedule: Schedule.nullable(),
  action: z.enum(['forward', 'drop', 'store']),
  destinations: z.array(z.object({ interface: z.string().describe('Interface id'), to: z.string() })),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

const Stats = z.object({ id: z.string(), fired: z.number().int(), last_fired_at: z.iso.datetime().nullable() });
const Ref = z.object({ id: z.string().min(1).describe('Rule id or name') });

const view = (r: RuleRow) => {
  const { fired: _f, last_fired_at: _l, ...rest } = r;
  return rest;
};

export function ruleRoutes(rules: RuleService): Route[] {
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
      method: 'GET', path: '/api/access-rules', summary: 'List rules in evaluation order', tags, roles: ANY_KEY,
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
      body: ReplaceRule, bodyName: 'ReplaceAccessRule', response: RuleView, responseName: 'AccessRule',
      handler: ({ params, body }) => view(rules.update(params.id, body)),
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
