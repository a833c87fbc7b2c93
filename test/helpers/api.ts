import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type BridgeProcess, startProcess } from './process.ts';
import type { CallOptions, CallResult } from './bridge.ts';

// HTTP helpers for tests that drive a bridge from outside: a JSON client for any base URL
// and key, a bounded wait for a condition, and a real bridge process that can be restarted
// (cleanly or with kill -9) on the same database.

export type Call = (method: string, path: string, options?: CallOptions) => Promise<CallResult>;

export function apiClient(baseUrl: () => string, key: () => string): Call {
  return async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const k = o.key === undefined ? key() : o.key;
    if (k) headers.authorization = `Bearer ${k}`;
    let body: string | Buffer | undefined;
    if (o.rawBody !== undefined) body = o.rawBody;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl() + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

/** Calls and fails loudly unless the status is the expected one; returns the body. */
export async function expectStatus(call: Call, status: number, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(method, path, body === undefined ? {} : { body });
  if (r.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

/** Polls until check returns a value other than undefined/false, or throws after timeoutMs. */
/** Calls and asserts a 2xx, naming the call and the answer when it is not; returns the body. */
export async function expectOk(call: Call, method: string, path: string, body?: unknown): Promise<any> {
  const r = await call(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

export async function waitUntil<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    last = await check();
    if (last !== undefined && last !== false) return last as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface RestartableBridge {
  call: Call;
  readonly process: BridgeProcess;
  /** Starts the process again on the same database (after stop or kill). */
  start(): Promise<void>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no drain, no checkpoint, exactly like a power cut to the process. */
  kill(): Promise<void>;
}

/** The real `fieldbridge bridge` process on dbPath, listening on port 0. */
export async function startBridgeProcess(dbPath: string, env: Record<string, string> = {}): Promise<RestartableBridge> {
  let current: BridgeProcess | undefined;
  let key = '';
  const start = async () => {
    current = await startProcess([], { SERVICE_DB_PATH: dbPath, SERVICE_LISTEN: '127.0.0.1:0', SERVICE_LOG_LEVEL: 'info', ...env });
    key = readFileSync(join(dirname(dbPath), 'owner.key'), 'utf8').trim();
  };
  await start();
  return {
    call: apiClient(() => current!.url, () => key),
    get process() {
      return current!;
    },
    start,
    stop: async () => {
      if (!current || current.child.exitCode !== null || current.child.signalCode !== null) return current?.child.exitCode ?? null;
      current.child.kill('SIGTERM');
      return current.exited;
    },
    kill: async () => {
      if (!current || current.child.exitCode !== null || current.child.signalCode !== null) return;
      current.child.kill('SIGKILL');
      await current.exited;
    },
  };
}

/**
 * Turns off routing.rate_limit (120 API sends a minute by default, docs/config.md): these tests
 * put hundreds of messages into the router on purpose. A bridge without the config section
 * (404) has no limit to lift.
 */
export async function liftSendLimit(call: Call): Promise<void> {
  const r = await call('POST', '/api/config/module', { body: { section: 'routing', settings: { rate_limit: { sends_per_minute: 0 } } } });
  if (r.status !== 200 && r.status !== 404) throw new Error(`could not lift the send limit: ${r.status} ${r.text}`);
}
