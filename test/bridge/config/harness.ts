import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { configRoutes } from '../../../src/bridge/config/routes.ts';
import { ConfigService } from '../../../src/bridge/config/service.ts';
import { ConfigStore } from '../../../src/bridge/config/store.ts';
import { keyRoutes } from '../../../src/bridge/keys/routes.ts';
import { KeyService } from '../../../src/bridge/keys/service.ts';
import { KeyStore } from '../../../src/bridge/keys/store.ts';
import { createRequestHandler, listen } from '../../../src/http/server.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { createLogger, type Logger } from '../../../src/lib/log.ts';

// A small in-process bridge for the config tests: the real database file, migrations, key
// service, HTTP kernel and config routes, on port 0. Mirrors startBridge in src/bridge/app.ts
// until the config routes are wired there.

export interface Harness {
  url: string;
  dir: string;
  dbPath: string;
  db: DatabaseSync;
  config: ConfigService;
  clock: FakeClock;
  logLines: string[];
  keys: { owner: string; admin: string; viewer: string };
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; raw?: string; contentType?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  /** A second service over the same database, as after a restart. */
  reopen(): ConfigService;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const dbPath = join(dir, 'bridge.db');
  const db = openBridgeDatabase(dbPath);
  const clock = new FakeClock();
  const logLines: string[] = [];
  const log: Logger = createLogger({ format: 'json', level: 'debug', write: (l) => logLines.push(l) });
  const keyService = new KeyService(new KeyStore(db), clock);
  const config = new ConfigService(new ConfigStore(db), clock, log);
  const keys = {
    owner: keyService.create('owner', 'owner').key,
    admin: keyService.create('admin', 'admin').key,
    viewer: keyService.create('viewer', 'viewer').key,
  };
  const handler = createRequestHandler({
    routes: [...keyRoutes(keyService), ...configRoutes(config)],
    log: createLogger({ write: () => {} }),
    now: () => clock.now(),
    authenticate: (token) => keyService.authenticate(token),
    checkResponses: true,
  });
  const server = await listen(handler, '127.0.0.1', 0);
  return {
    url: server.url,
    dir,
    dbPath,
    db,
    config,
    clock,
    logLines,
    keys,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = {};
      const key = options.key === undefined ? keys.owner : options.key;
      if (key) headers.authorization = `Bearer ${key}`;
      let body: string | undefined = options.raw;
      if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
      const res = await fetch(server.url + path, { method, headers, body });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    reopen: () => new ConfigService(new ConfigStore(db), clock),
    async close() {
      await server.close(1000);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
