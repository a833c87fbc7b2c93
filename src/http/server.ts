import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { type ExpectedWrite, isBusyError, isIoError, isReadOnlyError, isStorageFullError } from '../db/sqlite.ts';
import { AppError, type FieldError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import type { Logger } from '../lib/log.ts';
import { bearerToken } from '../auth/secrets.ts';
import { type AuthFailureLimiter, type AuthFailureReason, sourceOf } from './auth-failures.ts';
import { DEFAULT_BODY_LIMIT, isJsonContentType, MAX_JSON_DEPTH, readBody } from './body.ts';
import { hasMediaType } from './merge-patch.ts';
import type { HttpMetrics } from './metrics.ts';
import { zodErrors } from '../lib/validation.ts';
import { problem } from './problem.ts';
import { NO_QUERY } from './query.ts';
import { HANDLED, Reply, type Principal, type RequestContext, type Route } from './route.ts';
import { compileRoutes, matchRoute } from './router.ts';

export interface HttpAppOptions {
  routes: Route[];
  log: Logger;
  /** The program's clock: request ids carry its time, like every other id. */
  now: () => number;
  /** Resolves a presented bearer token to a key, or null when it is unknown or revoked. */
  authenticate(token: string, route: Route): Principal | null | Promise<Principal | null>;
  metrics?: HttpMetrics;
  /** Counts, logs and rate-limits requests without a valid key (auth-failures.ts). */
  authFailures?: AuthFailureLimiter;
  /** Called once per answered mutating call (not GET/HEAD) that matched a route and presented a
   *  valid key. Requests without one are not audited: they would let anyone fill the disk;
   *  authFailures counts them instead. */
  audit?(entry: { method: string; path: string; status: number; keyId: string | null; requestId: string }): void;
  /** Runs a route's handler so that another process's database lock does not stop the server
   *  (db/busy.ts, retryWhileBusy): `gate` is true for calls that change something (not
   *  GET/HEAD), which wait for the lock before they start; `repeatable` says whether the
   *  handler may be run again (no answer begun). Without it, handlers run as they are. */
  runHandler?<T>(work: () => Promise<T>, options: { gate: boolean; repeatable: () => boolean; writer?: ExpectedWrite }): Promise<T>;
  /** Told when a call that may change something arrives (not GET/HEAD), before its body is read:
   *  a write is coming (group commit, db/transaction.ts expectWrite). The answer is handed to
   *  runHandler, and told done() once the call is answered or its connection closed. */
  expectWrite?(): ExpectedWrite;
  /** Turns an error that is not an AppError (a driver's, from below the API) into its answer;
   *  null leaves it to the defaults (a 500). The bridge's is a table of driver codes. */
  problemOf?(error: unknown): AppError | null;
  /** Validate every response against its schema (tests turn this on; a mismatch is a 500). */
  checkResponses?: boolean;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the node:http request handler for a route table: the whole request pipeline. */
export function createRequestHandler(options: HttpAppOptions): RequestHandler {
  const table = compileRoutes(options.routes);
  const { log, metrics } = options;

  return (req, res) => {
    const started = process.hrtime.bigint();
    const headerId = req.headers['x-request-id'];
    const requestId = typeof headerId === 'string' && REQUEST_ID.test(headerId) ? headerId : newId('req', options.now());
    res.setHeader('X-Request-Id', requestId);
    let routeTemplate = '(unmatched)';
    let principal: Principal | null = null;
    // Refused for want of a valid key (401, 429): with authFailures these are logged once a
    // minute per source, so the access line of each is debug only.
    let keyRefused = false;
    const writer = req.method !== 'GET' && req.method !== 'HEAD' ? options.expectWrite?.() : undefined;
    if (writer) res.once('close', () => writer.done());

    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = String(res.statusCode);
      metrics?.requests.inc({ method: req.method ?? '', route: routeTemplate, status });
      metrics?.duration.observe({ route: routeTemplate }, seconds);
      (keyRefused && options.authFailures ? log.debug : log.info)('http_request', {
        request_id: requestId,
        method: req.method,
        route: routeTemplate,
        status: res.statusCode,
        duration_ms: Math.round(seconds * 1e4) / 10,
        key_id: principal?.keyId,
      });
      if (options.audit && principal && routeTemplate !== '(unmatched)' && req.method !== 'GET' && req.method !== 'HEAD') {
        try {
          options.audit({ method: req.method ?? '', path: (req.url ?? '').split('?')[0], status: res.statusCode, keyId: principal?.keyId ?? null, requestId });
        } catch (error) {
          log.error('audit_write_failed', { request_id: requestId, error: (error as Error).message });
        }
      }
    });

    const run = async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = matchRoute(table, req.method ?? 'GET', url.pathname);
      if (match.kind === 'bad_path') throw new AppError('ERR_BAD_PATH', 400, match.reason);
      if (match.kind === 'not_found') throw new AppError('ERR_NOT_FOUND', 404, `no route for ${url.pathname}`);
      if (match.kind === 'method_not_allowed') {
        throw new AppError('ERR_METHOD_NOT_ALLOWED', 405, `${req.method} is not allowed on ${url.pathname}; allowed: ${match.allow.join(', ')}`, {
          headers: { Allow: match.allow.join(', ') },
        });
      }
      const route = match.route;
      routeTemplate = route.path;

      if (route.roles !== 'public') {
        const refuse = (reason: AuthFailureReason, detail: string): AppError => {
          keyRefused = true;
          const source = sourceOf(req.socket.remoteAddress);
          const waitS = options.authFailures?.failed(source, reason) ?? null;
          if (waitS === null) return unauthorized(detail);
          return new AppError('ERR_AUTH_RATE_LIMITED', 429, `too many requests without a valid API key from ${source}; wait ${waitS} s (a valid key is still accepted)`, {
            headers: { 'Retry-After': String(waitS), 'WWW-Authenticate': 'Bearer' },
          });
        };
        const token = bearerToken(req.headers.authorization) ?? (route.keyInQuery ? url.searchParams.get(route.keyInQuery) || undefined : undefined);
        if (!token) throw refuse('no_key', 'this endpoint needs an API key: send "Authorization: Bearer <key>"');
        principal = await options.authenticate(token, route);
        if (!principal) throw refuse('bad_key', 'the API key is unknown or has been deleted');
        if (!route.roles.includes(principal.role)) {
          throw new AppError('ERR_FORBIDDEN', 403, `a key with role '${principal.role}' may not call ${route.method} ${route.path}; allowed roles: ${route.roles.join(', ')}`);
        }
      }

      const errors: FieldError[] = [];
      const params = validate(route.params, match.params, 'path', errors);
      // A route reads only the query parameters its schema names; one without refuses all (query.ts).
      const query = validate(route.query ?? NO_QUERY, Object.fromEntries(url.searchParams), 'query', errors);
      let body: unknown;
      if (route.body) {
        const contentType = req.headers['content-type'];
        // A JSON body's nesting is bounded while it arrives, before JSON.parse; a
        // body of another type is refused below without being parsed.
        const raw = await readBody(req, route.bodyLimit ?? DEFAULT_BODY_LIMIT, isJsonContentType(contentType) ? MAX_JSON_DEPTH : undefined);
        if ((raw.length > 0 || contentType) && !(route.bodyTypes ? hasMediaType(contentType, route.bodyTypes) : isJsonContentType(contentType))) {
          const wanted = route.bodyTypes?.join(' or ') ?? 'application/json';
          throw new AppError('ERR_UNSUPPORTED_MEDIA_TYPE', 415, `request body must be ${wanted}, got ${contentType ?? 'no Content-Type'}`);
        }
        let parsed: unknown;
        if (raw.length > 0) {
          try {
            parsed = JSON.parse(raw.toString('utf8'));
          } catch (e) {
            throw new AppError('ERR_BAD_JSON', 400, `request body is not valid JSON: ${(e as Error).message}`);
          }
        }
        body = validate(route.body, parsed, 'body', errors);
      } else if (req.method !== 'GET' && req.method !== 'HEAD') {
        // A body nobody reads must still be consumed, and is bounded like any other.
        await readBody(req, route.bodyLimit ?? DEFAULT_BODY_LIMIT);
      }
      if (errors.length > 0) {
        throw new AppError('ERR_VALIDATION', 400, `invalid request: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
      }

      const ctx: RequestContext = {
        params,
        query,
        body,
        principal,
        requestId,
        req,
        res,
        log: log.child({ request_id: requestId }),
        urlWith: (extra) => {
          const next = new URL(url.toString());
          for (const [k, v] of Object.entries(extra)) {
            if (v === undefined) next.searchParams.delete(k);
            else next.searchParams.set(k, v);
          }
          return next.pathname + next.search;
        },
      };
      const handle = async () => route.handler(ctx);
      const mutating = req.method !== 'GET' && req.method !== 'HEAD';
      const result = options.runHandler ? await options.runHandler(handle, { gate: mutating, repeatable: () => !res.headersSent, writer }) : await handle();
      if (result === HANDLED) return;
      const reply = result instanceof Reply ? result : new Reply(route.status ?? 200, result);
      if (options.checkResponses && route.response && reply.status < 300 && reply.body !== undefined) {
        const check = route.response.safeParse(reply.body);
        if (!check.success) {
          throw new Error(`response of ${route.method} ${route.path} does not match its schema: ${zodErrors(check.error, 'response').map((e) => `${e.path}: ${e.message}`).join('; ')}`);
        }
      }
      sendJson(res, reply.status, reply.body, reply.headers);
    };

    run().catch((error: unknown) => {
      if (res.headersSent) {
        log.error('http_error_after_headers', { request_id: requestId, error: (error as Error)?.message });
        res.destroy();
        return;
      }
      const known = error instanceof AppError ? error : (options.problemOf?.(error) ?? null);
      if (known) {
        sendProblem(res, known.status, known.code, known.message, known.errors, { ...known.headers }, requestId);
      } else if (isBusyError(error)) {
        sendProblem(res, 503, 'ERR_DB_BUSY', 'another process held the database lock for 5000 ms, or took it while the change was half made; a change that met it before it began saved nothing; try again', undefined, { 'Retry-After': '1' }, requestId);
      } else if (isStorageFullError(error)) {
        // SQLITE_FULL: the write was not made (SQLite rolled its transaction back). Nothing is
        // wrong with the request; it can be sent again once there is room.
        log.error('storage_full', { request_id: requestId, route: routeTemplate, error: (error as Error).message, action: 'answered 507; free space on the disk holding the database' });
        sendProblem(res, 507, 'ERR_STORAGE_FULL', 'the disk holding the database is full: the change was not saved; free space on it, then send the request again', undefined, {}, requestId);
      } else if (isReadOnlyError(error)) {
        log.error('storage_read_only', { request_id: requestId, route: routeTemplate, error: (error as Error).message, action: 'answered 503; make the database writable again' });
        sendProblem(res, 503, 'ERR_STORAGE_READ_ONLY', 'the database cannot be written: its file system is read-only or its mode changed; the change was not saved', undefined, {}, requestId);
      } else if (isIoError(error)) {
        log.error('storage_io_error', { request_id: requestId, route: routeTemplate, error: (error as Error).message, action: 'answered 503; check the card (dmesg), repair its file system, restart the bridge' });
        sendProblem(res, 503, 'ERR_STORAGE_IO', 'the file system holding the database failed a write (an I/O error; an SD card after errors turns read-only): the change was not saved', undefined, {}, requestId);
      } else {
        log.error('http_unexpected_error', {
          request_id: requestId,
          route: routeTemplate,
          error: (error as Error)?.message ?? String(error),
          stack: (error as Error)?.stack,
        });
        sendProblem(res, 500, 'ERR_INTERNAL', `internal error; the bridge log has details under request id ${requestId}`, undefined, {}, requestId);
      }
    });
  };
}

function unauthorized(detail: string): AppError {
  return new AppError('ERR_UNAUTHORIZED', 401, detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
}

function validate(schema: z.ZodType | undefined, input: unknown, where: string, errors: FieldError[]): unknown {
  if (!schema) return input;
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  errors.push(...zodErrors(result.error, where));
  return undefined;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  if (status === 204 || body === undefined) {
    res.writeHead(status === 200 && body === undefined ? 204 : status);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendProblem(
  res: ServerResponse,
  status: number,
  code: string,
  detail: string,
  errors: FieldError[] | undefined,
  headers: Record<string, string>,
  requestId: string,
): void {
  const text = JSON.stringify({ ...problem(status, code, detail, errors), request_id: requestId });
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.writeHead(status, { 'Content-Type': 'application/problem+json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export interface RunningServer {
  server: Server;
  /** Base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  /** Stops accepting, waits for in-flight requests (at most graceMs), then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

export function listen(handler: RequestHandler, host: string, port: number): Promise<RunningServer> {
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const server = createServer((req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0 && drained) drained();
    });
    handler(req, res);
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        server,
        port: address.port,
        url: `http://${shownHost}:${address.port}`,
        close: (graceMs = 10_000) =>
          new Promise<void>((done) => {
            const closed = new Promise<void>((r) => server.close(() => r()));
            server.closeIdleConnections();
            const finished = inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => (drained = r));
            const timer = setTimeout(() => server.closeAllConnections(), graceMs);
            finished.then(() => {
              clearTimeout(timer);
              server.closeIdleConnections();
              server.closeAllConnections();
              return closed;
            }).then(done);
          }),
      });
    });
  });
}
