import { createHash } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { StartupError } from '../lib/errors.ts';

// docs/api.md section 9: an append-only list of migrations; schema_version records the current
// version; at start every migration above it runs, each in its own transaction. A database
// newer than this binary is refused rather than guessed at.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrationResult {
  from: number;
  to: number;
  applied: Migration[];
}

export function migrationChecksum(m: Migration): string {
  return createHash('sha256').update(`${m.version}\n${m.name}\n${m.sql}`).digest('hex');
}

export function checkMigrationList(migrations: Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration list out of order: entry ${i} has version ${m.version}`);
  });
}

export function currentSchemaVersion(db: DatabaseSync): number {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
  if (!row) {
    db.prepare('INSERT INTO schema_version (version) VALUES (0)').run();
    return 0;
  }
  return row.version;
}

export function migrate(db: DatabaseSync, migrations: Migration[], what = 'database'): MigrationResult {
  checkMigrationList(migrations);
  const from = currentSchemaVersion(db);
  const latest = migrations.length;
  if (from > latest) {
    throw new StartupError(
      `${what} is at schema version ${from} but this fieldbridge knows only up to ${latest}: ` +
        'it was written by a newer release; run that release or restore a backup taken before the upgrade',
    );
  }
  const applied: Migration[] = [];
  for (const m of migrations.slice(from)) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(m.sql);
      db.prepare('UPDATE schema_version SET version = ?').run(m.version);
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw new StartupError(`${what} migration ${m.version} (${m.name}) failed: ${(error as Error).message}`);
    }
    applied.push(m);
  }
  return { from, to: Math.max(from, latest), applied };
}
