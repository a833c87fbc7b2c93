import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Logger } from '../lib/log.ts';
import type { Principal, Role } from '../auth/roles.ts';

export { ADMIN, ANY_KEY, OWNER, type Principal, type Role } from '../auth/roles.ts';

// Routes are plain data (docs/style.md habit 10): the router matches them, the server validates
// against their schemas, the OpenAPI generator documents them. One declaration, three uses.

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export interface RequestContext<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
  principal: Principal | null;
  requestId: string;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
  /** Absolute URL of this request with other query parameters (for Link headers). */
  urlWith(query: Record<string, string | undefined>): string;
}

/** A handler returns a body (sent with the route's status) or a Reply for anything else. */
export class Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  constructor(status: number, body: unknown, headers: Record<string, string> = {}) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** The handler wrote to ctx.res itself (streams, text formats). */
export const HANDLED = Symbol('handled');

export interface Route<P = any, Q = any, B = any, R = any> {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** 'public' routes need no key; otherwise the roles allowed. */
  roles: readonly Role[] | 'public';
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  response?: z.ZodType<R>;
  /** Name of the response component in the OpenAPI document. */
  responseName?: string;
  bodyName?: string;
  /** The body as the OpenAPI document describes it, where the server checks it in two steps:
   *  `body` the shape, the handler what depends on another field (an interface's settings, by
   *  its kind). Built from the same schemas both steps use; `body` when absent. */
  bodyDocumented?: z.ZodType;
  /** Media types the body may have (default: application/json and application/*+json); others are 415. */
  bodyTypes?: readonly string[];
  status?: number;
  /** Largest accepted body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Non-JSON success media type (documentation only), e.g. "text/plain". */
  produces?: string;
  /** A query parameter that may carry the API key instead of the Authorization header, for
   *  clients that cannot send headers (a browser's EventSource). Request logs never show it. */
  keyInQuery?: string;
  /** Extra error statuses this route answers (documentation). */
  errors?: number[];
  handler(ctx: RequestContext<P, Q, B>): unknown | Promise<unknown>;
}

export function route<P = undefined, Q = undefined, B = undefined, R = unknown>(r: Route<P, Q, B, R>): Route<P, Q, B, R> {
  return r;
}
