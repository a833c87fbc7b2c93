import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HubOptions, type RunningHub, startHub } from '../../src/hub/app.ts';
import type { HubStoreLocation } from '../../src/hub/store/store.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/log.ts';

// An in-process hub on a temporary SQLite file (or a given location) and port 0. Every log
// line is kept in `logs`; `ownerKey` is the first owner key, made through the setup token the
// way the web page makes it.

export interface TestHub {
  hub: RunningHub;
  url: string;
  dir: string;
  logs: string[];
  ownerKey: string;
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any; text: string; bytes: Buffer }>;
  stop(): Promise<void>;
}

export async function startTestHub(options: { clock?: Clock; store?: HubStoreLocation; storeOptions?: HubOptions['storeOptions']; mqtt?: HubOptions['mqtt']; setup?: boolean } = {}): Promise<TestHub> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const logs: string[] = [];
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => logs.push(line) });
  const hub = await startHub({
    store: options.store ?? { sqlitePath: join(dir, 'hub.db') },
    storeOptions: options.storeOptions,
    host: '127.0.0.1',
    port: 0,
    log,
    clock: options.clock,
    mqtt: options.mqtt,
    checkResponses: true,
  });
  const call: TestHub['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? result.ownerKey : o.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(hub.url + path, { method, headers, body });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text, bytes };
  };
  const result: TestHub = {
    hub,
    url: hub.url,
    dir,
    logs,
    ownerKey: '',
    call,
    stop: async () => {
      await hub.close(2000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  if (options.setup !== false && hub.setupToken) {
    const created = await call('POST', '/api/setup', { key: null, body: { setup_token: hub.setupToken, label: 'first owner' } });
    if (created.status !== 201) throw new Error(`setup failed: ${created.text}`);
    result.ownerKey = created.body.key;
  }
  return result;
}
