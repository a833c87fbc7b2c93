import type { Migration } from '../db/migrate.ts';

// The bridge schema, append-only (SPEC section 9). Never edit an entry once it has shipped:
// test/db/migrations.lock.json pins a checksum of each, and a change to an old one fails the
// tests. Add a new entry instead.

export const bridgeMigrations: Migration[] = [
  {
    version: 1,
    name: 'api_keys',
    sql: `
      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        label        TEXT NOT NULL,
        role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
        lookup       TEXT NOT NULL UNIQUE,
        hash         TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        last_used_at TEXT
      );
    `,
  },
];
