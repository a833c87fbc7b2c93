import type { KeyObject } from 'node:crypto';
import type { Role } from '../../auth/roles.ts';
import { signingKey } from '../../hubwire/credentials.ts';
import type { UplinkEventKind } from '../../hubwire/topics.ts';
import type { Migration } from '../../db/migrate.ts';
import type { Logger } from '../../lib/log.ts';
import { maskUrlCredentials } from '../../lib/mask-url.ts';
import { hubMigrations } from '../migrations.ts';
import { ownTables, type TenantTable, tenantTables } from './catalogue.ts';
import { type BatchOp, type BatchOutcomes, type EventRow, type EventTable, HELLO_SQL, insertEventSql, isRowError, STATUS_SQL, TOUCH_SQL, writeBatch } from './ingest-batch.ts';
import { type HubMigrationReport, migrateHub } from './migrate.ts';
import { type HubPositionRow, lastPositions, type PositionFilter } from './positions.ts';
import { PostgresDriver } from './postgres-driver.ts';
import { quoteIdent, type Row, type SqlDriver } from './sql.ts';
import { SqliteDriver } from './sqlite-driver.ts';

// The hub's store (docs/design.md section 8): one interface, one implementation of the SQL, two
// drivers (SQLite self-hosted, PostgreSQL hosted). The SQL is written once with $n
// placeholders and portable syntax (ON CONFLICT upserts, RETURNING, CASE rather than
// GREATEST), so the conformance suite in test/hub/store-conformance.ts checks one behaviour
// on both databases.
//
// One file of more than 500 lines on purpose: the rows, the HubStore interface and its one
// SQL implementation are read together (each method's SQL beside the row it returns), and the
// tenant and bridge caches the methods share would otherwise be passed between files.

/** The hub's roles are the bridge's (docs/design.md section 5). */
export type HubRole = Role;
/** The bridges' event kinds (hubwire/topics.ts), each stored in its own table. */
export type EventKind = UplinkEventKind;

/** Event kind -> its table (migration 3). */
export const EVENT_TABLES: Record<EventKind, EventTable> = {
  message: 'messages',
  delivery: 'deliveries',
  telemetry: 'telemetry',
  position: 'positions',
};

export interface TenantRow {
  id: string;
  created_at: string;
  deleted_at: string | null;
  purge_after: string | null;
}

export interface HubKeyRow {
  id: string;
  tenant_id: string;
  label: string;
  role: HubRole;
  key_lookup: string;
  key_hash: string;
  created_at: string;
  last_used_at: string | null;
}

export interface BridgeRow {
  tenant_id: string;
  bridge_id: string;
  version: string | null;
  interfaces: unknown[];
  state: 'online' | 'offline' | 'unknown';
  session: number;
  status_ts: string | null;
  first_seen: string;
  last_seen: string;
}

/** A bridge enrollment (migration 5). */
export interface EnrollmentRow {
  id: string;
  tenant_id: string;
  name: string;
  token_lookup: string;
  token_hash: string;
  /** The bridge's HMAC key, base64url; null before the exchange and after revocation. */
  secret: string | null;
  created_at: string;
  enrolled_at: string | null;
  verified_at: string | null;
  revoked_at: string | null;
  /** The time in the newest request that made a secret (set by exchanges only). */
  request_ts?: string | null;
}

/** What the ingest needs of an enrolled bridge to check its messages. */
export interface BridgeAuth {
  id: string;
  tenantId: string;
  /** The HMAC key, imported once (hubwire/credentials.ts SigningKey). */
  secret: KeyObject | null;
  /** The secret as stored (base64url): what marking the bridge verified is bound to. */
  secretText: string | null;
  verified: boolean;
  revoked: boolean;
}

export type { EventRow, HubPositionRow, PositionFilter };

export interface StatusUpdate {
  state: 'online' | 'offline';
  session: number;
  ts: string;
  at: string;
}

export interface HubStore {
  readonly dialect: 'sqlite' | 'postgres';
  readonly migrations: HubMigrationReport;

  /** Creates the tenant if missing; true when it was created. */
  ensureTenant(id: string, at: string): Promise<boolean>;
  getTenant(id: string): Promise<TenantRow | undefined>;
  markTenantDeleted(id: string, at: string, purgeAfter: string): Promise<boolean>;
  restoreTenant(id: string): Promise<boolean>;
  tenantsDueForPurge(at: string): Promise<string[]>;
  /** Removes every row of the tenant from every tenant table; returns rows removed per table. */
  /** Deletes every row of the tenant. With `dueBy`, only if it is still marked deleted with its
   *  purge time at or before then, checked inside the purge's own transaction (a restore
   *  that landed meanwhile wins): null when it was not purged. */
  purgeTenant(id: string, dueBy?: string): Promise<Record<string, number> | null>;

  insertKey(row: HubKeyRow): Promise<void>;
  listKeys(tenantId: string): Promise<HubKeyRow[]>;
  getKey(tenantId: string, id: string): Promise<HubKeyRow | undefined>;
  /** The key with this lookup and its tenant's deletion mark. */
  keyByLookup(lookup: string): Promise<(HubKeyRow & { tenant_deleted_at: string | null }) | undefined>;
  deleteKey(tenantId: string, id: string): Promise<boolean>;
  /**
   * Deletes the key unless it is the tenant's last owner key ('last_owner'), decided in one
   * transaction that holds the tenant's row, so two owners deleting each other's keys at the
   * same moment cannot both succeed.
   */
  deleteKeyKeepingAnOwner(tenantId: string, id: string): Promise<'deleted' | 'missing' | 'last_owner'>;
  countKeys(filter?: { tenantId?: string; role?: HubRole }): Promise<number>;
  touchKey(id: string, at: string): Promise<void>;

  getSetting(name: string): Promise<string | undefined>;
  putSetting(name: string, value: string): Promise<void>;
  /** Deletes the setting and returns its value: whoever gets the value, got it alone. */
  takeSetting(name: string): Promise<string | undefined>;

  /**
   * Tenants as the MQTT ingest sees them, from a cache (live tenants only, for
   * TENANT_CACHE_MS; dropped at once by this store's own ensureTenant, markTenantDeleted,
   * restoreTenant and purgeTenant). Unknown and deleted tenants are read every time.
   */
  ingestTenants(ids: Iterable<string>): Promise<Map<string, TenantRow | undefined>>;
  /** Writes one ingest batch (events, bridges' last_seen, hello, status, sequence numbers) in
   *  one transaction; `acks` on the result: the bridges' sequence states to acknowledge. */
  ingestBatch(ops: BatchOp[]): Promise<BatchOutcomes>;
  /** True when an ingestBatch error is caused by the rows' values (retrying cannot help). */
  isRowError(error: unknown): boolean;

  insertEnrollment(row: EnrollmentRow): Promise<void>;
  /** The tenant's enrollments by id; with a page, at most `limit` of those after `afterId`. */
  listEnrollments(tenantId: string, page?: { afterId?: string; limit?: number }): Promise<EnrollmentRow[]>;
  enrollmentByLookup(lookup: string): Promise<EnrollmentRow | undefined>;
  /**
   * The secret to answer an exchange with: `fresh` when the request is newer (`requestTs`)
   * than the newest one that made a secret, or none was made yet; else the secret held (a
   * redelivered, doubled or replayed request). One statement, so of two replicas answering
   * one request both answer with the same secret. null when the enrollment was revoked or its
   * token used up (a first signed event arrived).
   */
  enrollmentSecret(id: string, fresh: string, requestTs: string, at: string): Promise<string | null>;
  /** The first event signed with `secret` arrived: the token stops working. */
  markEnrollmentVerified(id: string, secret: string, at: string): Promise<void>;
  /** Revokes: the secret is wiped and the bridge's messages are refused from now on. */
  revokeEnrollment(tenantId: string, id: string, at: string): Promise<'revoked' | 'already' | 'missing'>;
  /**
   * Enrolled bridges as the MQTT ingest sees them, by bridge id, from a cache (BRIDGE_CACHE_MS,
   * unknown ids included; dropped at once by this store's own exchange, verification and
   * revocation, so a revocation on this replica stops the bridge's next batch).
   */
  ingestBridges(ids: Iterable<string>): Promise<Map<string, BridgeAuth | undefined>>;

  recordHello(tenantId: string, bridgeId: string, hello: { version: string; interfaces: unknown[]; at: string }): Promise<void>;
  /** Applies a status unless it is older than the one recorded; true when applied. */
  recordStatus(tenantId: string, bridgeId: string, status: StatusUpdate): Promise<boolean>;
  touchBridge(tenantId: string, bridgeId: string, at: string): Promise<void>;
  /** The tenant's bridges by bridge_id; with a page, at most `limit` of those after `afterId`. */
  listBridges(tenantId: string, page?: { afterId?: string; limit?: number }): Promise<BridgeRow[]>;

  /** Stores an event once: false when its event_id was already stored for this tenant. */
  insertEvent(kind: EventKind, row: EventRow): Promise<boolean>;
  listEvents(tenantId: string, kind: EventKind, limit?: number): Promise<EventRow[]>;
  countEvents(tenantId: string, kind: EventKind): Promise<number>;
  /** The newest reported position of each node per bridge, by bridge and node id (positions.ts). */
  lastPositions(tenantId: string, filter: PositionFilter, limit: number): Promise<HubPositionRow[]>;

  /** The hub's own tenant tables (made by its migrations) as the catalogue has them now
   *  (src/hub/store/catalogue.ts); export and purge take exactly these. */
  tenantTables(): Promise<TenantTable[]>;
  /** One tenant's rows of one table, secret columns withheld. */
  exportRows(table: TenantTable, tenantId: string): Promise<Row[]>;

  ping(): Promise<void>;
  close(): Promise<void>;
}

export type { AckState, BatchOp, BatchOutcome, BatchOutcomes } from './ingest-batch.ts';

export type HubStoreLocation = { sqlitePath: string } | { databaseUrl: string };

export interface OpenHubStoreOptions {
  /** Defaults to the hub's own list; tests append entries to see the catalogue follow. */
  migrations?: Migration[];
  now?: () => number;
  /** PostgreSQL pool size. */
  maxConnections?: number;
  /** Told when an older SQLite file readable by others is narrowed to its owner. */
  log?: Logger;
}

/** Opens the database, verifies recorded checksums and applies pending migrations. */
export async function openHubStore(location: HubStoreLocation, options: OpenHubStoreOptions = {}): Promise<HubStore> {
  const driver: SqlDriver =
    'databaseUrl' in location ? new PostgresDriver(location.databaseUrl, { max: options.maxConnections }) : new SqliteDriver(location.sqlitePath, { log: options.log });
  const what = 'databaseUrl' in location ? `hub database ${redactUrl(location.databaseUrl)}` : `hub database ${location.sqlitePath}`;
  try {
    const migrations = options.migrations ?? hubMigrations;
    const report = await migrateHub(driver, migrations, what, options.now ?? Date.now);
    return new SqlHubStore(driver, report, ownTables(migrations));
  } catch (error) {
    await driver.close().catch(() => {});
    throw error;
  }
}

/** postgres://user:secret@host/db -> postgres://***@host/db, for messages and logs (lib/mask-url.ts). */
export const redactUrl = maskUrlCredentials;

/**
 * How long a live tenant is taken from the ingest's cache. A change made through this store is
 * seen at once; one made by another process on the same database (another replica's
 * DELETE /api/tenant, a restore) within this time. Events that slip in after a deletion are
 * removed by its purge with the rest of the tenant's rows.
 */
export const TENANT_CACHE_MS = 1000;

/** How long the ingest takes an enrolled bridge's credentials (or an unknown id) from its
 *  cache: another replica's revocation or enrollment is seen within this time. */
export const BRIDGE_CACHE_MS = 1000;
/** Entries the bridge cache holds at most (unknown ids from a flood of forged topics included). */
const BRIDGE_CACHE_MAX = 10_000;

class SqlHubStore implements HubStore {
  readonly #db: SqlDriver;
  readonly #tenants = new Map<string, { row: TenantRow; until: number }>();
  readonly #bridges = new Map<string, { auth: BridgeAuth | undefined; until: number }>();
  #bridgesEpoch = 0;
  // Bumped by every change to a tenant made here: a read that began before the change must
  // not put its (old) row into the cache after the change dropped it.
  #tenantsEpoch = 0;
  readonly dialect: 'sqlite' | 'postgres';
  readonly migrations: HubMigrationReport;
  /** The tables the hub's migrations made: the only ones export and purge may touch. */
  readonly #ownTables: ReadonlySet<string>;

  constructor(driver: SqlDriver, migrations: HubMigrationReport, own: ReadonlySet<string>) {
    this.#db = driver;
    this.dialect = driver.dialect;
    this.migrations = migrations;
    this.#ownTables = own;
  }

  async ensureTenant(id: string, at: string): Promise<boolean> {
    this.#forgetTenant(id);
    try {
      return (await this.#db.run('INSERT INTO tenants (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [id, at])) > 0;
    } finally {
      this.#forgetTenant(id);
    }
  }
  async getTenant(id: string): Promise<TenantRow | undefined> {
    return (await this.#db.query('SELECT id, created_at, deleted_at, purge_after FROM tenants WHERE id = $1', [id]))[0] as unknown as TenantRow | undefined;
  }
  async markTenantDeleted(id: string, at: string, purgeAfter: string): Promise<boolean> {
    this.#forgetTenant(id);
    const sql = 'UPDATE tenants SET deleted_at = $2, purge_after = $3 WHERE id = $1 AND deleted_at IS NULL';
    try {
      return (await this.#db.run(sql, [id, at, purgeAfter])) > 0;
    } finally {
      this.#forgetTenant(id);
    }
  }
  async restoreTenant(id: string): Promise<boolean> {
    this.#forgetTenant(id);
    try {
      return (await this.#db.run('UPDATE tenants SET deleted_at = NULL, purge_after = NULL WHERE id = $1 AND deleted_at IS NOT NULL', [id])) > 0;
    } finally {
      this.#forgetTenant(id);
    }
  }
  async tenantsDueForPurge(at: string): Promise<string[]> {
    const rows = await this.#db.query('SELECT id FROM tenants WHERE purge_after IS NOT NULL AND purge_after <= $1 ORDER BY id', [at]);
    return rows.map((r) => String(r.id));
  }
  async purgeTenant(id: string, dueBy?: string): Promise<Record<string, number> | null> {
    this.#forgetTenant(id);
    const tables = await this.tenantTables();
    try {
      return await this.#purge(id, tables, dueBy);
    } finally {
      this.#forgetTenant(id);
      // Its enrolled bridges went with it.
      this.#bridgesEpoch++;
      this.#bridges.clear();
    }
  }
  #purge(id: string, tables: TenantTable[], dueBy: string | undefined): Promise<Record<string, number> | null> {
    return this.#db.transaction(async (tx) => {
      if (dueBy !== undefined) {
        // Locks the tenant row (PostgreSQL) inside the purge transaction, so a concurrent
        // restore either lands first and stops the purge, or waits and finds nothing.
        const stillDue = await tx.run('UPDATE tenants SET purge_after = purge_after WHERE id = $1 AND deleted_at IS NOT NULL AND purge_after <= $2', [id, dueBy]);
        if (stillDue === 0) return null;
      }
      const removed: Record<string, number> = {};
      // The tenants row goes last: until the transaction commits nothing is visible anyway,
      // but a purge interrupted between statements must never leave rows without a tenant.
      for (const t of [...tables.filter((t) => t.name !== 'tenants'), ...tables.filter((t) => t.name === 'tenants')]) {
        removed[t.name] = await tx.run(`DELETE FROM ${quoteIdent(t.name)} WHERE ${quoteIdent(t.tenantColumn)} = $1`, [id]);
      }
      return removed;
    });
  }

  async insertKey(row: HubKeyRow): Promise<void> {
    await this.#db.run(
      `INSERT INTO api_keys (id, tenant_id, label, role, key_lookup, key_hash, created_at, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [row.id, row.tenant_id, row.label, row.role, row.key_lookup, row.key_hash, row.created_at, row.last_used_at],
    );
  }
  async listKeys(tenantId: string): Promise<HubKeyRow[]> {
    return (await this.#db.query('SELECT * FROM api_keys WHERE tenant_id = $1 ORDER BY id', [tenantId])) as unknown as HubKeyRow[];
  }
  async getKey(tenantId: string, id: string): Promise<HubKeyRow | undefined> {
    return (await this.#db.query('SELECT * FROM api_keys WHERE tenant_id = $1 AND id = $2', [tenantId, id]))[0] as unknown as HubKeyRow | undefined;
  }
  async keyByLookup(lookup: string): Promise<(HubKeyRow & { tenant_deleted_at: string | null }) | undefined> {
    const sql = `SELECT k.*, t.deleted_at AS tenant_deleted_at FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_lookup = $1`;
    return (await this.#db.query(sql, [lookup]))[0] as unknown as (HubKeyRow & { tenant_deleted_at: string | null }) | undefined;
  }
  async deleteKey(tenantId: string, id: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM api_keys WHERE tenant_id = $1 AND id = $2', [tenantId, id])) > 0;
  }
  deleteKeyKeepingAnOwner(tenantId: string, id: string): Promise<'deleted' | 'missing' | 'last_owner'> {
    return this.#db.transaction(async (tx) => {
      // The tenant's row is the lock: on PostgreSQL this no-op UPDATE holds it until the
      // transaction ends, so of two deletions in one tenant the second waits here and then
      // counts what the first left (a lone DELETE ... WHERE (SELECT count(*)) > 1 would not:
      // under READ COMMITTED both would count from their own snapshot and both delete).
      // SQLite: BEGIN IMMEDIATE has taken the database's write lock already.
      await tx.run('UPDATE tenants SET id = id WHERE id = $1', [tenantId]);
      const row = (await tx.query('SELECT role FROM api_keys WHERE tenant_id = $1 AND id = $2', [tenantId, id]))[0];
      if (!row) return 'missing';
      if (row.role === 'owner') {
        const owners = await tx.query("SELECT CAST(count(*) AS INTEGER) AS n FROM api_keys WHERE tenant_id = $1 AND role = 'owner'", [tenantId]);
        if (Number(owners[0].n) <= 1) return 'last_owner';
      }
      await tx.run('DELETE FROM api_keys WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      return 'deleted';
    });
  }
  async countKeys(filter: { tenantId?: string; role?: HubRole } = {}): Promise<number> {
    // NULL parameters switch a condition off, so one statement serves every filter (the CAST
    // gives PostgreSQL the parameter's type, which "$1 IS NULL" alone does not).
    const sql = `SELECT CAST(count(*) AS INTEGER) AS n FROM api_keys
                  WHERE (CAST($1 AS TEXT) IS NULL OR tenant_id = $1) AND (CAST($2 AS TEXT) IS NULL OR role = $2)`;
    const rows = await this.#db.query(sql, [filter.tenantId ?? null, filter.role ?? null]);
    return Number(rows[0].n);
  }
  async touchKey(id: string, at: string): Promise<void> {
    await this.#db.run('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, at]);
  }

  async getSetting(name: string): Promise<string | undefined> {
    const row = (await this.#db.query('SELECT value FROM hub_settings WHERE name = $1', [name]))[0];
    return row ? String(row.value) : undefined;
  }
  async putSetting(name: string, value: string): Promise<void> {
    await this.#db.run('INSERT INTO hub_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [name, value]);
  }
  async takeSetting(name: string): Promise<string | undefined> {
    const row = (await this.#db.query('DELETE FROM hub_settings WHERE name = $1 RETURNING value', [name]))[0];
    return row ? String(row.value) : undefined;
  }

  async ingestTenants(ids: Iterable<string>): Promise<Map<string, TenantRow | undefined>> {
    const now = performance.now();
    const out = new Map<string, TenantRow | undefined>();
    for (const id of ids) {
      if (out.has(id)) continue;
      const cached = this.#tenants.get(id);
      if (cached && cached.until > now) {
        out.set(id, cached.row);
        continue;
      }
      const epoch = this.#tenantsEpoch;
      const row = await this.getTenant(id);
      out.set(id, row);
      if (row && !row.deleted_at && epoch === this.#tenantsEpoch) this.#tenants.set(id, { row, until: now + TENANT_CACHE_MS });
    }
    return out;
  }
  #forgetTenant(id: string): void {
    this.#tenantsEpoch++;
    this.#tenants.delete(id);
  }
  ingestBatch(ops: BatchOp[]): Promise<BatchOutcomes> {
    return writeBatch(this.#db, ops);
  }
  isRowError(error: unknown): boolean {
    return isRowError(this.dialect, error);
  }

  async insertEnrollment(row: EnrollmentRow): Promise<void> {
    this.#forgetBridge(row.id);
    await this.#db.run(
      `INSERT INTO enrolled_bridges (id, tenant_id, name, token_lookup, token_hash, secret, created_at, enrolled_at, verified_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [row.id, row.tenant_id, row.name, row.token_lookup, row.token_hash, row.secret, row.created_at, row.enrolled_at, row.verified_at, row.revoked_at],
    );
    this.#forgetBridge(row.id);
  }
  async listEnrollments(tenantId: string, page: { afterId?: string; limit?: number } = {}): Promise<EnrollmentRow[]> {
    const sql = 'SELECT * FROM enrolled_bridges WHERE tenant_id = $1 AND (CAST($2 AS TEXT) IS NULL OR id > $2) ORDER BY id';
    const rows = page.limit === undefined ? await this.#db.query(sql, [tenantId, page.afterId ?? null]) : await this.#db.query(`${sql} LIMIT $3`, [tenantId, page.afterId ?? null, page.limit]);
    return rows as unknown as EnrollmentRow[];
  }
  async enrollmentByLookup(lookup: string): Promise<EnrollmentRow | undefined> {
    return (await this.#db.query('SELECT * FROM enrolled_bridges WHERE token_lookup = $1', [lookup]))[0] as unknown as EnrollmentRow | undefined;
  }
  async enrollmentSecret(id: string, fresh: string, requestTs: string, at: string): Promise<string | null> {
    this.#forgetBridge(id);
    try {
      // PostgreSQL re-evaluates the CASEs on the row as another replica's UPDATE left it, so the
      // second answer to one request sees request_ts = $3 and keeps the secret.
      const newer = '(secret IS NULL OR request_ts IS NULL OR request_ts < $3)';
      const rows = await this.#db.query(
        `UPDATE enrolled_bridges SET secret = CASE WHEN ${newer} THEN $2 ELSE secret END, request_ts = CASE WHEN ${newer} THEN $3 ELSE request_ts END, enrolled_at = $4
          WHERE id = $1 AND revoked_at IS NULL AND verified_at IS NULL RETURNING secret`,
        [id, fresh, requestTs, at],
      );
      return rows.length > 0 ? String(rows[0].secret) : null;
    } finally {
      this.#forgetBridge(id);
    }
  }
  async markEnrollmentVerified(id: string, secret: string, at: string): Promise<void> {
    const changed = await this.#db.run('UPDATE enrolled_bridges SET verified_at = $3 WHERE id = $1 AND secret = $2 AND verified_at IS NULL', [id, secret, at]);
    const cached = this.#bridges.get(id);
    if (changed > 0 && cached?.auth) cached.auth.verified = true;
  }
  async revokeEnrollment(tenantId: string, id: string, at: string): Promise<'revoked' | 'already' | 'missing'> {
    this.#forgetBridge(id);
    try {
      const n = await this.#db.run('UPDATE enrolled_bridges SET revoked_at = $3, secret = NULL WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL', [tenantId, id, at]);
      if (n > 0) return 'revoked';
      const row = await this.#db.query('SELECT revoked_at FROM enrolled_bridges WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      return row.length > 0 ? 'already' : 'missing';
    } finally {
      this.#forgetBridge(id);
    }
  }
  async ingestBridges(ids: Iterable<string>): Promise<Map<string, BridgeAuth | undefined>> {
    const now = performance.now();
    const out = new Map<string, BridgeAuth | undefined>();
    const missing: string[] = [];
    for (const id of ids) {
      if (out.has(id)) continue;
      const cached = this.#bridges.get(id);
      if (cached && cached.until > now) out.set(id, cached.auth);
      else {
        out.set(id, undefined);
        missing.push(id);
      }
    }
    // The ids not cached, in one query per batch (a flood of forged ids is one round trip).
    for (let i = 0; i < missing.length; i += 500) {
      const chunk = missing.slice(i, i + 500);
      const epoch = this.#bridgesEpoch;
      const rows = await this.#db.query(`SELECT id, tenant_id, secret, verified_at, revoked_at FROM enrolled_bridges WHERE id IN (${chunk.map((_, n) => `$${n + 1}`).join(', ')})`, chunk);
      const found = new Map(rows.map((row) => [String(row.id), row]));
      for (const id of chunk) {
        const row = found.get(id);
        const auth: BridgeAuth | undefined = row
          ? { id, tenantId: String(row.tenant_id), secret: row.secret ? signingKey(Buffer.from(String(row.secret), 'base64url')) : null, secretText: row.secret ? String(row.secret) : null, verified: row.verified_at !== null, revoked: row.revoked_at !== null }
          : undefined;
        out.set(id, auth);
        if (epoch !== this.#bridgesEpoch) continue;
        // Full: the oldest tenth goes (Map keeps insertion order), not the ids in use.
        if (this.#bridges.size >= BRIDGE_CACHE_MAX) {
          let drop = BRIDGE_CACHE_MAX / 10;
          for (const key of this.#bridges.keys()) {
            this.#bridges.delete(key);
            if (--drop <= 0) break;
          }
        }
        this.#bridges.delete(id);
        this.#bridges.set(id, { auth, until: now + BRIDGE_CACHE_MS });
      }
    }
    return out;
  }
  #forgetBridge(id: string): void {
    this.#bridgesEpoch++;
    this.#bridges.delete(id);
  }

  async recordHello(tenantId: string, bridgeId: string, hello: { version: string; interfaces: unknown[]; at: string }): Promise<void> {
    await this.#db.run(HELLO_SQL, [tenantId, bridgeId, hello.version, JSON.stringify(hello.interfaces), hello.at]);
  }
  async recordStatus(tenantId: string, bridgeId: string, s: StatusUpdate): Promise<boolean> {
    // STATUS_SQL (ingest-batch.ts) applies it only if it is not older than the one held.
    return (await this.#db.run(STATUS_SQL, [tenantId, bridgeId, s.state, s.session, s.ts, s.at])) > 0;
  }
  async touchBridge(tenantId: string, bridgeId: string, at: string): Promise<void> {
    await this.#db.run(TOUCH_SQL, [tenantId, bridgeId, at]);
  }
  async listBridges(tenantId: string, page: { afterId?: string; limit?: number } = {}): Promise<BridgeRow[]> {
    // Keyset paging on the primary key (tenant_id, bridge_id); NULL switches a bound off, as in countKeys.
    const sql = `SELECT * FROM bridges WHERE tenant_id = $1 AND (CAST($2 AS TEXT) IS NULL OR bridge_id > $2) ORDER BY bridge_id`;
    const rows =
      page.limit === undefined
        ? await this.#db.query(sql, [tenantId, page.afterId ?? null])
        : await this.#db.query(`${sql} LIMIT $3`, [tenantId, page.afterId ?? null, page.limit]);
    return rows.map((r) => ({ ...(r as unknown as BridgeRow), session: Number(r.session), interfaces: parseArray(r.interfaces) }));
  }

  async insertEvent(kind: EventKind, row: EventRow): Promise<boolean> {
    return (await this.#db.run(insertEventSql(EVENT_TABLES[kind]), [row.tenant_id, row.event_id, row.bridge_id, row.ts, row.body, row.received_at])) > 0;
  }
  async listEvents(tenantId: string, kind: EventKind, limit = 1000): Promise<EventRow[]> {
    const sql = `SELECT * FROM ${EVENT_TABLES[kind]} WHERE tenant_id = $1 ORDER BY ts, event_id LIMIT $2`;
    return (await this.#db.query(sql, [tenantId, limit])) as unknown as EventRow[];
  }
  async countEvents(tenantId: string, kind: EventKind): Promise<number> {
    const rows = await this.#db.query(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${EVENT_TABLES[kind]} WHERE tenant_id = $1`, [tenantId]);
    return Number(rows[0].n);
  }
  lastPositions(tenantId: string, filter: PositionFilter, limit: number): Promise<HubPositionRow[]> {
    return lastPositions(this.#db, this.dialect, tenantId, filter, limit);
  }

  async tenantTables(): Promise<TenantTable[]> {
    return tenantTables(await this.#db.catalogue(), this.#ownTables);
  }
  async exportRows(table: TenantTable, tenantId: string): Promise<Row[]> {
    const columns = table.exportColumns.map(quoteIdent).join(', ');
    return this.#db.query(`SELECT ${columns} FROM ${quoteIdent(table.name)} WHERE ${quoteIdent(table.tenantColumn)} = $1`, [tenantId]);
  }

  async ping(): Promise<void> {
    await this.#db.query('SELECT count(*) AS n FROM hub_migrations');
  }
  close(): Promise<void> {
    return this.#db.close();
  }
}

function parseArray(text: unknown): unknown[] {
  try {
    const v = JSON.parse(String(text));
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** A bare driver on a location, without migrating: for tools and tests that inspect the database. */
export function openSqlDriver(location: HubStoreLocation): SqlDriver {
  return 'databaseUrl' in location ? new PostgresDriver(location.databaseUrl, { max: 2 }) : new SqliteDriver(location.sqlitePath);
}
