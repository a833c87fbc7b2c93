import { z } from 'zod';
import { problem } from './problem.ts';
import type { Route } from './route.ts';

// OpenAPI 3.1 from the route table: the same zod schemas that validate requests describe
// them here, so the document cannot drift from the code. Request and response components are
// converted separately (io 'input' vs 'output'), because a field with a default is optional
// in a request and always present in a response.

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

const ERROR_STATUSES: Record<number, string> = {
  400: 'The request is malformed or a field is invalid; `errors` lists every field.',
  401: 'No API key, or an unknown one.',
  403: 'The key is valid but its role may not do this.',
  404: 'No such resource or route.',
  405: 'The path exists but not with this method; see the Allow header.',
  409: 'The resource is in a state that does not allow this.',
  413: 'The request body is too large.',
  415: 'The request body is not application/json (or, for PATCH, application/merge-patch+json).',
  429: 'Too many sends: the routing.rate_limit budget is spent; see Retry-After.',
  503: 'The database stayed busy past 5000 ms, or cannot be written (read-only).',
  507: 'The disk holding the database is full: nothing was saved; send again once there is room.',
};

/** A schema several bodies share, documented once as a component of its own and referred to
 *  (a kind's settings); `io`: which side it appears on (a request's input or an answer's output). */
export interface NamedSchema {
  name: string;
  schema: z.ZodType;
  io: 'input' | 'output';
}

export function buildOpenApi(info: OpenApiInfo, routes: Route[], named: readonly NamedSchema[] = []): Record<string, unknown> {
  const inputs = z.registry<{ id: string }>();
  const outputs = z.registry<{ id: string }>();
  const inputNames = new Map<z.ZodType, string>();
  const outputNames = new Map<z.ZodType, string>();
  const register = (registry: typeof inputs, names: Map<z.ZodType, string>, schema: z.ZodType, name: string) => {
    const known = names.get(schema);
    if (known) return known;
    let unique = name;
    for (let n = 2; [...names.values()].includes(unique); n++) unique = `${name}${n}`;
    names.set(schema, unique);
    registry.add(schema, { id: unique });
    return unique;
  };

  for (const n of named) {
    if (n.io === 'input') register(inputs, inputNames, n.schema, n.name);
    else register(outputs, outputNames, n.schema, n.name);
  }

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const opId = operationId(r);
    const op: Record<string, unknown> = {
      operationId: opId,
      summary: r.summary,
      tags: r.tags ?? [],
      security: r.roles === 'public' ? [] : [{ bearer: [] }],
    };
    if (r.description || r.roles !== 'public') {
      const roles = r.roles === 'public' ? 'No key needed.' : `Roles: ${r.roles.join(', ')}.`;
      op.description = [r.description, roles].filter(Boolean).join('\n\n');
    }
    const parameters = [...parametersOf(r.params, 'path'), ...parametersOf(r.query, 'query')];
    if (parameters.length > 0) op.parameters = parameters;
    if (r.body) {
      const name = register(inputs, inputNames, r.bodyDocumented ?? r.body, r.bodyName ?? `${pascal(opId)}Request`);
      op.requestBody = { required: true, content: Object.fromEntries((r.bodyTypes ?? ['application/json']).map((type) => [type, { schema: ref(name) }])) };
    }
    const status = String(r.status ?? 200);
    const responses: Record<string, unknown> = {};
    if (r.produces) {
      responses[status] = { description: 'Success', content: { [r.produces]: { schema: { type: 'string' } } } };
    } else if (r.response) {
      const name = register(outputs, outputNames, r.response, r.responseName ?? `${pascal(opId)}Response`);
      responses[status] = { description: 'Success', content: { 'application/json': { schema: ref(name) } } };
    } else {
      responses[status] = { description: 'Success' };
    }
    const errorStatuses = new Set<number>(r.errors ?? []);
    if (r.roles !== 'public') [401, 403].forEach((s) => errorStatuses.add(s));
    if (r.params) errorStatuses.add(404);
    // Every route can answer 400: one without query parameters refuses any (query.ts).
    errorStatuses.add(400);
    if (r.body) [413, 415].forEach((s) => errorStatuses.add(s));
    // Any call that writes can meet a full disk.
    if (r.method !== 'GET') errorStatuses.add(507);
    for (const s of [...errorStatuses].sort()) {
      responses[String(s)] = { $ref: `#/components/responses/Problem${s}` };
    }
    op.responses = responses;
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }

  const uri = (id: string) => `#/components/schemas/${id}`;
  const inputSchemas = z.toJSONSchema(inputs, { uri, io: 'input', unrepresentable: 'any' }).schemas;
  const outputSchemas = z.toJSONSchema(outputs, { uri, io: 'output', unrepresentable: 'any' }).schemas;
  const schemas: Record<string, unknown> = { Problem: problemSchema() };
  for (const [id, s] of Object.entries({ ...inputSchemas, ...outputSchemas })) {
    const { $schema: _s, $id: _i, ...rest } = s as Record<string, unknown>;
    schemas[id] = rest;
  }
  const responses: Record<string, unknown> = {};
  for (const [s, description] of Object.entries(ERROR_STATUSES)) {
    responses[`Problem${s}`] = {
      description,
      content: { 'application/problem+json': { schema: ref('Problem'), example: problem(Number(s), 'ERR_EXAMPLE', description) } },
    };
  }

  return {
    openapi: '3.1.0',
    info: { ...info, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <key>' } },
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses,
    },
  };
}

function ref(name: string) {
  return { $ref: `#/components/schemas/${name}` };
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function operationId(r: Route): string {
  const words = r.path
    .replace(/^\/api\//, '')
    .split(/[/{}\-_.]+/)
    .filter(Boolean);
  return [r.method.toLowerCase(), ...words.map((w) => w[0].toUpperCase() + w.slice(1))].join('');
}

function pascal(s: string): string {
  return s[0].toUpperCase() + s.slice(1);
}

function problemSchema() {
  return {
    type: 'object',
    description: 'RFC 9457 problem details. No stack traces, ever.',
    required: ['type', 'title', 'status', 'detail'],
    properties: {
      type: { type: 'string', description: 'Stable URI naming the kind of error' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string', description: 'What went wrong with this request' },
      request_id: { type: 'string' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'message'],
          properties: { path: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
  };
}
