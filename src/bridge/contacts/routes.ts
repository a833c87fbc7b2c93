import { z } from 'zod';
import { contactAddressFields } from '../../bearers/drivers.ts';
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

export const GroupMembersSchema = z.array(Address).min(1, 'a group needs at least one member').max(1000);

const Ref = z.object({ id: z.string().min(1).describe('Id or name') });

interface BookRoutesSpec<V> {
  base: string;
  tag: string;
  field: 'addresses' | 'members';
  schema: z.ZodType<V>;
  component: string;
}

function bookRoutes<V>(service: BookService<V>, spec: BookRoutesSpec<V>): Route[] {
  const Body = z.strictObject({ name: InterfaceName, [spec.field]: spec.schema } as Record<string, z.ZodType>);
  const View = z.object({ id: z.string(), name: z.string(), [spec.field]: spec.schema, created_at: z.iso.datetime(), updated_at: z.iso.datetime() } as Record<string, z.ZodType>);
  const view = (row: { id: string; name: string; value: V; created_at: string; updated_at: string }) => ({
    id: row.id,
    name: row.name,
    [spec.field]: row.value,
    created_at: row.created_at,
    updated_at: row.updated_at,
  });
  const tags = [spec.tag];
  const valueOf = (body: Record<string, unknown>) => body[spec.field] as V;
  return [
    route({
      method: 'GET', path: spec.base, summary: `List ${spec.tag}`, tags, roles: ANY_KEY,
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
      body: Body, bodyName: `${spec.component}Input`, response: View, responseName: spec.component,
      handler: ({ params, body }) => view(service.update(params.id, body.name as string, valueOf(body))),
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
    ...bookRoutes(contacts, { base: '/api/contacts', tag: 'contacts', field: 'addresses', schema: ContactAddressesSchema as z.ZodType<Record<string, string>>, component: 'Contact' }),
    ...bookRoutes(groups, { base: '/api/object-groups', tag: 'object-groups', field: 'members', schema: GroupMembersSchema, component: 'ObjectGroup' }),
  ];
}
