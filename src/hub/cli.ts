import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { systemClock } from '../lib/clock.ts';
import { StartupError } from '../lib/errors.ts';
import { createLogger, pickLogFormat } from '../lib/log.ts';
import { serveUntilSignal, systemdNotifier } from '../lib/systemd.ts';
import { startHub } from './app.ts';
import { DEFAULT_HUB_SQLITE_PATH, readHubConfig } from './config.ts';
import { DEFAULT_TENANT, HubKeyService } from './keys/service.ts';
import { TOPIC_SEGMENT } from '../hubwire/topics.ts';
import { openHubStore } from './store/store.ts';

// `fieldbridge hub` and `fieldbridge hub create-key --role owner --label NAME [--tenant T]`.
// main.ts holds the command table entry and calls runHubCommand.

export const HUB_USAGE = 'fieldbridge hub | fieldbridge hub create-key --role owner|admin|viewer --label TEXT [--tenant NAME]';

/** Thrown for bad arguments; main.ts answers its own UsageError with exit code 2. */
export class HubUsageError extends StartupError {
  constructor(message: string) {
    super(`hub: ${message}\nusage: ${HUB_USAGE}`, 2);
  }
}

export async function runHubCommand(values: Record<string, string | boolean | undefined>, positionals: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const action = positionals[0];
  if (action === undefined) {
    if (values.role !== undefined || values.label !== undefined || values.tenant !== undefined) throw new HubUsageError('--role, --label and --tenant belong to "hub create-key"');
    return runHub(env);
  }
  if (action !== 'create-key') throw new HubUsageError(`unknown action ${JSON.stringify(action)}; expected "create-key"`);
  const role = values.role;
  if (role !== 'owner' && role !== 'admin' && role !== 'viewer') throw new HubUsageError('--role must be owner, admin or viewer');
  const label = typeof values.label === 'string' ? values.label.trim() : '';
  if (!label) throw new HubUsageError('--label is required');
  const tenant = typeof values.tenant === 'string' ? values.tenant : DEFAULT_TENANT;
  // The tenant is an MQTT topic level too (fieldbridge/v1/<tenant>/...), so the same rule.
  if (!TOPIC_SEGMENT.test(tenant)) throw new HubUsageError('--tenant must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit');
  const config = readHubConfig(env);
  if ('sqlitePath' in config.store) checkHubDatabaseExists(config.store.sqlitePath, env);
  const store = await openHubStore(config.store);
  try {
    const created = await new HubKeyService(store, systemClock).create(tenant, label, role);
    process.stderr.write(`created ${role} key ${created.id} (${label}) in tenant ${tenant}; it is shown only now:\n`);
    process.stdout.write(created.key + '\n');
  } finally {
    await store.close();
  }
  return 0;
}

/**
 * create-key adds a key to the database the running hub uses; it never creates one. A key
 * written to a new file (HUB_SQLITE_PATH unset in the shell while the service sets it) is a
 * key the hub rejects, printed as if it worked. Exit code 1, naming the path it looked at.
 */
function checkHubDatabaseExists(path: string, env: NodeJS.ProcessEnv): void {
  const where = `${resolve(path)} (${env.HUB_SQLITE_PATH ? 'HUB_SQLITE_PATH' : `HUB_SQLITE_PATH is unset, so the default ${DEFAULT_HUB_SQLITE_PATH}`})`;
  const fix = 'set HUB_SQLITE_PATH (or HUB_DATABASE_URL) to what the hub service uses, or start the hub once to create its database';
  if (!existsSync(path)) throw new StartupError(`hub create-key: no hub database at ${where}; create-key never creates one: ${fix}`);
  let isHub = false;
  try {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      isHub = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'hub_migrations'").get() !== undefined;
    } finally {
      db.close();
    }
  } catch {
    // Not a SQLite file at all: reported below like any other non-hub file.
  }
  if (!isHub) throw new StartupError(`hub create-key: ${where} is not a hub database (no hub_migrations table); create-key never creates one: ${fix}`);
}

async function runHub(env: NodeJS.ProcessEnv): Promise<number> {
  const config = readHubConfig(env);
  const log = createLogger({ level: config.logLevel, format: pickLogFormat(env, 'HUB_LOG_FORMAT') });
  const notifier = systemdNotifier(env, log);
  const hub = await startHub({ store: config.store, host: config.listen.host, port: config.listen.port, log, mqtt: config.mqtt });
  notifier.ready();
  return serveUntilSignal(log, notifier, (grace) => hub.close(grace), 'closing MQTT and the database');
}
