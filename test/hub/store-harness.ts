import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import type { HubStoreLocation } from '../../src/hub/store/store.ts';

// Where the conformance suite gets its databases: a new empty one per call, all removed at
// the end. SQLite: a file in a temporary folder. PostgreSQL: CREATE DATABASE fb_test_<random>
// on the server at TEST_PG_URL, dropped WITH (FORCE) at the end.

export interface StoreHarness {
  name: string;
  freshLocation(): Promise<HubStoreLocation>;
  cleanup(): Promise<void>;
}

export const TEST_PG_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function sqliteHarness(): StoreHarness {
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  let n = 0;
  return {
    name: 'sqlite',
    freshLocation: async () => ({ sqlitePath: join(dir, `hub-${++n}.db`) }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function postgresHarness(): StoreHarness {
  const admin = postgres(TEST_PG_URL, { max: 1, onnotice: () => {} });
  const created: string[] = [];
  return {
    name: 'postgres',
    freshLocation: async () => {
      const name = `fb_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      created.push(name);
      const url = new URL(TEST_PG_URL);
      url.pathname = '/' + name;
      return { databaseUrl: url.toString() };
    },
    cleanup: async () => {
      for (const name of created) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}
