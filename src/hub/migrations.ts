import type { Migration } from '../db/migrate.ts';

// The hub schema, append-only (docs/api.md section 9). Each entry's checksum is recorded when it is
// applied and verified at every start (src/hub/store/migrate.ts): never edit a shipped entry,
// append a new one. The SQL is written once for both SQLite and PostgreSQL, so it keeps to
// what both understand: TEXT ids and ISO 8601 timestamps, INTEGER counters, JSON as TEXT.
//
// Conventions the tenant export and purge rely on (src/hub/store/catalogue.ts):
//  - every table holding a tenant's data has a tenant_id column (the tenants table itself is
//    keyed by id); a table without one (hub_migrations, hub_settings) belongs to the hub;
//  - a column holding a secret has a name containing hash, secret, password, credential,
//    token or lookup, and is withheld from exports.
//  - no foreign keys between tenant tables, so a purge can empty them in any order.

export const hubMigrations: Migration[] = [
  {
    version: 1,
    name: 'tenants_and_api_keys',
    sql: `
      CREATE TABLE tenants (
        id          TEXT PRIMARY KEY,
        created_at  TEXT NOT NULL,
        deleted_at  TEXT,
        purge_after TEXT
      );
      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        tenant_id    TEXT NOT NULL,
        label        TEXT NOT NULL,
        role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
        key_lookup   TEXT NOT NULL UNIQUE,
        key_hash     TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        last_used_at TEXT
      );
      CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id);
      CREATE TABLE hub_settings (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'bridges',
    sql: `
      CREATE TABLE bridges (
        tenant_id  TEXT NOT NULL,
        bridge_id  TEXT NOT NULL,
        version    TEXT,
        interfaces TEXT NOT NULL DEFAULT '[]',
        state      TEXT NOT NULL DEFAULT 'unknown',
        session    INTEGER NOT NULL DEFAULT 0,
        status_ts  TEXT,
        first_seen TEXT NOT NULL,
        last_seen  TEXT NOT NULL,
        PRIMARY KEY (tenant_id, bridge_id)
      );
    `,
  },
  {
    version: 3,
    name: 'bridge_events',
    sql: `
      CREATE TABLE messages (
        tenant_id   TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        bridge_id   TEXT NOT NULL,
        ts          TEXT NOT NULL,
        body        TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, event_id)
      );
      CREATE TABLE deliveries (
        tenant_id   TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        bridge_id   TEXT NOT NULL,
        ts          TEXT NOT NULL,
        body        TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, event_id)
      );
      CREATE TABLE telemetry (
        tenant_id   TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        bridge_id   TEXT NOT NULL,
        ts          TEXT NOT NULL,
        body        TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, event_id)
      );
      CREATE TABLE positions (
        tenant_id   TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        bridge_id   TEXT NOT NULL,
        ts          TEXT NOT NULL,
        body        TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, event_id)
      );
    `,
  },
  {
    version: 4,
    name: 'hub_acknowledgements',
    sql: `
      -- Issue 15: what the hub has stored of each bridge's sequence numbers (src/
      -- lib/topics.ts): everything up to upto, and the ranges above it (JSON [[lo, hi], ...]);
      -- seen: the highest number ever heard (a restored bridge continues after it).
      -- BIGINT: sequence numbers go up to 2^53 (INTEGER is 32 bits on PostgreSQL; SQLite
      -- reads both as its 64-bit INTEGER).
      CREATE TABLE bridge_seqs (
        tenant_id  TEXT NOT NULL,
        bridge_id  TEXT NOT NULL,
        upto       BIGINT NOT NULL DEFAULT 0,
        ranges     TEXT NOT NULL DEFAULT '[]',
        seen       BIGINT NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, bridge_id)
      );
      -- Statuses are ordered by connection (issue 15 defect): the connection whose status is
      -- held, and the ones it replaced (JSON list, newest first, a few kept).
      ALTER TABLE bridges ADD COLUMN conn TEXT;
      ALTER TABLE bridges ADD COLUMN old_conns TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 5,
    name: 'bridge_enrollments',
    sql: `
      -- Issue 15 item 3: bridges enrolled with their own credentials (docs/hub.md, "Enrollment").
      -- id: the bridge id in topics, unique across tenants so an event's bridge id alone finds
      -- its credentials (and a topic naming another tenant is told apart: wrong_tenant).
      -- token_lookup/token_hash: the one-time enrollment token, as API keys keep theirs.
      -- secret: the bridge's HMAC key (base64url), set by the exchange, wiped by revocation;
      -- withheld from exports by its name (src/hub/store/catalogue.ts).
      -- verified_at: the first event signed with the secret arrived; the token stops working.
      -- request_ts: the time in the newest request that made a secret (only a newer request
      -- makes another: a redelivered, doubled or replayed one gets the same secret again).
      CREATE TABLE enrolled_bridges (
        id           TEXT PRIMARY KEY,
        tenant_id    TEXT NOT NULL,
        name         TEXT NOT NULL,
        token_lookup TEXT NOT NULL UNIQUE,
        token_hash   TEXT NOT NULL,
        secret       TEXT,
        created_at   TEXT NOT NULL,
        enrolled_at  TEXT,
        verified_at  TEXT,
        revoked_at   TEXT,
        request_ts   TEXT
      );
      CREATE INDEX enrolled_bridges_by_tenant ON enrolled_bridges (tenant_id, id);
    `,
  },
];
