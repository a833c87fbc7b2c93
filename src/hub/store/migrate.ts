import { checkMigrationList, type Migration, migrationChecksum } from '../../db/migrate.ts';
import { StartupError } from '../../lib/errors.ts';
import type { SqlDriver } from './sql.ts';

// Hub migrations (docs/api.md sections 7 and 9): numbered, append-only, and each one's SHA-256 is
// recorded when it is applied. At every start the recorded checksums are compared with the
// migration text in this binary; a difference means someone edited a shipped migration (or
// the database belongs to another build), and the hub refuses to start rather than run on a
// schema it cannot vouch for. The whole check-and-apply runs in one transaction under the
// driver's migration lock, so replicas starting together migrate one at a time: the first
// applies, the others wait, then find nothing left to do.

export interface HubMigrationReport {
  applied: Migration[];
  verified: number;
}

const LEDGER = `CREATE TABLE IF NOT EXISTS hub_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  checksum   TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

export async function migrateHub(driver: SqlDriver, migrations: Migration[], what: string, now: () => number): Promise<HubMigrationReport> {
  checkMigrationList(migrations);
  return driver.migrationTransaction(async (tx) => {
    await tx.exec(LEDGER);
    const recorded = (await tx.query('SELECT version, name, checksum FROM hub_migrations ORDER BY version')) as Array<{
      version: number;
      name: string;
      checksum: string;
    }>;
    for (const r of recorded) {
      const known = migrations[Number(r.version) - 1];
      if (!known) {
        throw new StartupError(
          `${what} has hub migration ${r.version} (${r.name}) applied, but this fieldbridge knows only up to ${migrations.length}: ` +
            'it was migrated by a newer release; run that release or restore a backup taken before the upgrade',
        );
      }
      const expected = migrationChecksum(known);
      if (r.checksum !== expected) {
        throw new StartupError(
          `${what}: hub migration ${known.version} (${known.name}) differs from the one applied to this database ` +
            `(recorded checksum ${r.checksum.slice(0, 12)}..., this release ${expected.slice(0, 12)}...); ` +
            'a shipped migration must never be edited: restore its original text and add the change as a new migration',
        );
      }
    }
    const applied: Migration[] = [];
    for (const m of migrations.slice(recorded.length)) {
      try {
        await tx.exec(m.sql);
      } catch (error) {
        throw new StartupError(`${what}: hub migration ${m.version} (${m.name}) failed: ${(error as Error).message}`);
      }
      await tx.run('INSERT INTO hub_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)', [
        m.version,
        m.name,
        migrationChecksum(m),
        new Date(now()).toISOString(),
      ]);
      applied.push(m);
    }
    return { applied, verified: recorded.length };
  });
}
