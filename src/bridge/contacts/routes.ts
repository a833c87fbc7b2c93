import { z } from 'zod';
import { contactAddressFields } from '../../bearers/drivers.ts';
import { applyPatch, checkReplace, MERGE_PATCH_TYPES, MergePatchBody, type ReadOnlyField, readOnlyShape } from '../../http/merge-patch.ts';
import { NOT_PAGED } from '../../http/query.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import { InterfaceName } from '../interfaces/routes.ts';
import type { BookService } from './service.ts';

const Address = z.string().trim().min(1).max(200);

// One optional address per address family the drivers declare (bearers/drivers.ts).
const ADDRESS_FIELDS = contactAddressFields();
const fieldList = ADDRESS_FIELDS.map((f) => f.field);

export const ContactAddressesSchema = z
  .strictObject(Object.fromEntries(ADDRESS_FIELDS.map((f) => [f.field, f.schema])))
  .refine((a) => Object.values(a).some((v) => v !== undefined), { message: `a contact needs at least one address (${fieldList.slice(0, -1).join(', ')} or ${fieldList.at(-1)})` });

/** A contact's preferred order of address families (docs/routing.md, "Contacts on whichever
 *  bearer works"): kept as the order of its addresses, shown as `prefer`. */
export const PreferSchema = z
  .array(z.enum(fieldList as [string, ...string[]], { error: `prefer entries must be address fields: ${fieldList.join(', ')}` }))
  .min(1).max(fieldList.length)
  .refine((p) => new Set(p).size === p.length, { error: 'prefer must not name a field twice' })
  .describe(`Address fields in the order to try them (send-to-contact with a strategy); fields left out follow in ${fieldList.join(', ')} order`);

/** The addresses with their keys in the preferred order (then the rest, in registry order). */
export function orderAddresses(addresses: Record<string, string>, prefer: readonly string[] | undefined): Record<string, string> {
  const keys = [...(prefer ?? []).filter((k) => addresses[k] !== undefined), ...fieldList.filter((k) => addresses[k] !== undefined && !(prefer ?? []).includes(k))];
  return Object.fromEntries(keys.map((k) => [k, addresses[k]]));
}

export const GroupMembersSchema = z.array(Address).min(1, 'a group needs at least one member').max(1000);

const Ref = z.object({ id: z.string().min(1).describe('Id or name') });

// What GET answers beyond the writable fields: PUT and PATCH accept them back (docs/api.md 4.12).
const READ_ONLY: Record<string, ReadOnlyField> = {
  id: { schema: z.string() },
  created_at: { schema: z.string() },
  updated_at: { schema: z.string() },
};

interface BookRoutesSpec<V> {
  base: string;
  tag: string;
  field: 'addresses' | 'members';
  schema: z.ZodType<V>;
  component: string;
  /** How an error message names one: "contact", "object group". */
  what: string;
  /** Contacts: an optional `prefer` order, kept as the order of the value's keys. */
  prefer?: boolean;
}

function bookRoutes<V>(service: BookService<V>, spec: BookRoutesSpec<V>): Route[] {
  const prefer = spec.prefer ? { prefer: PreferSchema.optional() } : {};
  const writable = { name: InterfaceName, [spec.field]: spec.schema, ...prefer } as Record<string, z.ZodType>;
  const Body = z.strictObject(writable);
  const Replace = z.strictObject({ ...writable, ...readOnlyShape(READ_ONLY) });
  const View = z.object({ id: z.string(), name: z.string(), [spec.field]: spec.schema, ...(spec.prefer ? { prefer: z.array(z.string()) } : {}), created_at: z.iso.datetime(), updated_at: z.iso.datetime() } as Record<string, z.ZodType>);
  const view = (row: { id: string; name: string; value: V; created_at: string; updated_at: string }) => ({
    id: row.id,
    name: row.name,
    [spec.field]: row.value,
    ...(spec.prefer ? { prefer: Object.keys(row.value as object) } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  });
  const tags = [spec.tag];
  const valueOf = (body: Record<string, unknown>) =>
    (spec.prefer ? orderAddresses(body[spec.field] as Record<string, string>, body.prefer as string[] | undefined) : body[spec.field]) as V;
  return [
    route({
      method: 'GET', path: spec.base, summary: `List ${spec.tag} (every one: not paged)`, tags, roles: ANY_KEY, query: NOT_PAGED,
      response: z.object({ items: z.array(View), next_cursor: z.null() }), responseName: `${spec.component}List`,
      handler: () => ({ items: service.list().map(view), next_cursor: null }),
    }),
    route({
      method: 'POST', path: spec.base, summary: `Create one of the ${spec.tag}`, tags, roles: ADMIN, status: 201, errors: [409],
      body: Body, bodyName: `${spec.component}Input`, response: View, responseName: spec.component,
      handler: ({ body }) => view(service.create(body.name as string, valueOf(body))),
    }),
    route({
      method: 'GET', path: `${spec.base}/{id}`, summary: `One of the ${spec.tag}`, tags, roles: ANY_KEY, params: Ref,
      response: View, responseName: spec.component,
      handler: ({ params }) => view(service.get(params.id)),
    }),
    route({
      method: 'PUT', path: `${spec.base}/{id}`, summary: `Replace one of the ${spec.tag}`, tags, roles: ADMIN, params: Ref, errors: [409],
      description: 'Takes the body GET answers: read-only fields (id, created_at, updated_at) are ignored when equal to the stored values and refused (400) when not.',
      body: Replace, bodyName: `Replace${spec.component}`, response: View, responseName: spec.component,
      handler: ({ params, body }) => {
        const row = service.get(params.id);
        const input = checkReplace(body, view(row), READ_ONLY, spec.what);
        return view(service.update(row.id, input.name as string, valueOf(input)));
      },
    }),
    route({
      method: 'PATCH', path: `${spec.base}/{id}`, summary: `Change part of one of the ${spec.tag} (JSON merge patch, RFC 7396)`, tags, roles: ADMIN, params: Ref, errors: [409],
      description: `The patch is applied to the ${spec.what} as GET shows it and the result is checked as a PUT; null removes a member${spec.prefer ? ' (an address)' : ''}; an array is replaced whole.`,
      body: MergePatchBody, bodyName: 'MergePatch', bodyTypes: MERGE_PATCH_TYPES, response: View, responseName: spec.component,
      handler: ({ params, body }) => {
        const row = service.get(params.id);
        const current = view(row);
        const { id: _i, created_at: _c, updated_at: _u, ...writableNow } = current;
        const input = applyPatch({ patch: body, current: writableNow, stored: current, readOnly: READ_ONLY, schema: Body, what: spec.what }) as Record<string, unknown>;
        return view(service.update(row.id, input.name as string, valueOf(input)));
      },
    }),
    route({
      method: 'DELETE', path: `${spec.base}/{id}`, summary: `Delete one of the ${spec.tag}; refused (409) while a rule refers to it`, tags, roles: ADMIN, params: Ref, status: 204, errors: [409],
      handler: ({ params }) => {
        service.delete(params.id);
        return undefined;
      },
    }),
  ];
}

export function contactRoutes(contacts: BookService<Record<string, string>>, groups: BookService<string[]>): Route[] {
  return [
    ...bookRoutes(contacts, { base: '/api/contacts', tag: 'contacts', field: 'addresses', schema: ContactAddressesSchema as z.ZodType<Record<string, string>>, component: 'Contact', what: 'contact', prefer: true }),
    ...bookRoutes(groups, { base: '/api/object-groups', tag: 'object-groups', field: 'members', schema: GroupMembersSchema, component: 'ObjectGroup', what: 'object group' }),
  ];
}
