#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { StartupError } from './lib/errors.ts';

// argv -> subcommand. Each command parses its own flags strictly: an unknown flag is a usage
// error (exit 2), never silently ignored.
//
// A command loads only what it needs (small boards): this file imports nothing
// but the argument parser and the error class, and each command imports its code when it runs.
// `fieldbridge version` loads no bridge, the bridge no hub, the hub no bearers
// (test/build/lazy-modules.test.ts checks it). The `sim` command's usage and options come from
// the driver modules, so they are loaded when `sim` runs or a usage is printed.

type Options = NonNullable<ParseArgsConfig['options']>;
/** A value known now, or loaded when first asked for. */
type Lazy<T> = T | (() => Promise<T>);

interface Command {
  summary: Lazy<string>;
  usage: Lazy<string>;
  /** The usage `--help` prints after these positionals (`sim rnode --help`); `usage` without. */
  usageFor?(positionals: string[]): Promise<string>;
  options?: Lazy<Options>;
  positionals?: number;
  run(values: Record<string, string | boolean | undefined>, positionals: string[], env: NodeJS.ProcessEnv): Promise<number>;
}

const resolveLazy = async <T>(value: Lazy<T>): Promise<T> => (typeof value === 'function' ? (value as () => Promise<T>)() : value);
const simCli = () => import('./bearers/shared/simulators/cli.ts');

export const DEFAULT_DB_PATH = './data/bridge.db';

const commands: Record<string, Command> = {
  bridge: {
    summary: 'run the field bridge (the default)',
    usage: 'fieldbridge bridge',
    run: async (_v, _p, env) => runBridge(env),
  },
  hub: {
    summary: 'run the fleet hub; hub create-key --role owner --label NAME [--tenant T] prints a new hub key once',
    usage: 'fieldbridge hub | fieldbridge hub create-key --role owner|admin|viewer --label TEXT [--tenant NAME]',
    options: { role: { type: 'string' }, label: { type: 'string' }, tenant: { type: 'string' } },
    positionals: 1,
    run: async (values, positionals, env) => (await import('./hub/cli.ts')).runHubCommand(values, positionals, env),
  },
  sim: {
    summary: async () => (await simCli()).SIM_SUMMARY,
    usage: async () => (await simCli()).SIM_USAGE,
    usageFor: async (positionals) => (await simCli()).simUsage(positionals),
    options: async () => (await simCli()).SIM_COMMAND_OPTIONS,
    positionals: 1,
    run: async (values, positionals) => (await simCli()).runSimCommand(values, positionals),
  },
  version: {
    summary: 'print fieldbridge, Node and SQLite versions and the CPU architecture',
    usage: 'fieldbridge version',
    run: async () => {
      // getBuiltinModule, not import(): the executable's code cache leaves no import() callback
      // (docs/packaging.md).
      const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
      const { VERSION } = await import('./lib/version.ts');
      const db = new DatabaseSync(':memory:');
      const sqlite = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
      db.close();
      process.stdout.write(`fieldbridge ${VERSION}\nnode ${process.version}\nsqlite ${sqlite}\narch ${process.arch}\n`);
      return 0;
    },
  },
  keys: {
    summary: 'keys create --role owner|admin|viewer --label TEXT: create a bridge API key offline and print it once',
    usage: 'fieldbridge keys create --role owner|admin|viewer --label TEXT',
    options: { role: { type: 'string' }, label: { type: 'string' } },
    positionals: 1,
    run: async (values, positionals, env) => {
      if (positionals[0] !== 'create') throw new UsageError(`unknown keys action ${JSON.stringify(positionals[0] ?? '')}; expected "create"`);
      const role = values.role;
      if (role !== 'owner' && role !== 'admin' && role !== 'viewer') throw new UsageError('--role must be owner, admin or viewer');
      const label = typeof values.label === 'string' ? values.label.trim() : '';
      if (!label) throw new UsageError('--label is required');
      const [{ envString }, { openBridgeDatabase }, { KeyService }, { KeyStore }, { systemClock }, { whileWriteWanted }] = await Promise.all([
        import('./lib/env.ts'),
        import('./bridge/app.ts'),
        import('./bridge/keys/service.ts'),
        import('./bridge/keys/store.ts'),
        import('./lib/clock.ts'),
        import('./db/write-wanted.ts'),
      ]);
      const dbPath = envString(env, 'SERVICE_DB_PATH', DEFAULT_DB_PATH);
      // A running bridge under a steady flow holds the write lock nearly all the time; it leaves
      // it free while this runs (db/write-wanted.ts).
      await whileWriteWanted(dbPath, () => {
        const db = openBridgeDatabase(dbPath);
        try {
          const created = new KeyService(new KeyStore(db), systemClock).create(label, role);
          process.stderr.write(`created ${role} key ${created.id} (${label}); it is shown only now:\n`);
          process.stdout.write(created.key + '\n');
        } finally {
          db.close();
        }
      });
      return 0;
    },
  },
  ports: {
    summary: 'list serial ports and bonded Bluetooth LE boards with the port value to give an interface (--json); --check PATH passes test bytes through one',
    usage:
      'fieldbridge ports [--json]\n' +
      '       fieldbridge ports --check PATH [--peer PATH2]\n' +
      '  --check opens PATH through the serial driver and sends a probe line that must come back on PATH\n' +
      '  (TX-RX loopback jumper) or, with --peer, reach PATH2 and return (null-modem cable, socat pty pair).\n' +
      '  It writes to the device: never use it on a port a radio is using. Exit 0 when the bytes passed.',
    options: { json: { type: 'boolean' }, check: { type: 'string' }, peer: { type: 'string' } },
    run: async (values) => {
      if (typeof values.check === 'string') {
        const { checkSerialPaths } = await import('./bearers/shared/links/port-check.ts');
        const result = await checkSerialPaths(values.check, typeof values.peer === 'string' ? values.peer : undefined);
        process.stdout.write(result.lines.map((l) => `${result.ok ? 'ok' : 'FAILED'}: ${l}\n`).join(''));
        return result.ok ? 0 : 1;
      }
      if (values.peer !== undefined) throw new UsageError('--peer goes with --check');
      const [{ listSerialPorts }, { listBlePorts }] = await Promise.all([import('./bearers/shared/links/list-ports.ts'), import('./bearers/shared/links/ble-ports.ts')]);
      const { BLE_SERVICES } = await import('./bearers/drivers.ts');
      const [serial, ble] = await Promise.all([listSerialPorts(), listBlePorts(BLE_SERVICES)]);
      const ports = [...serial, ...ble.ports];
      if (values.json) process.stdout.write(JSON.stringify(ports, null, 2) + '\n');
      else {
        if (serial.length === 0) process.stdout.write('no serial ports found (read from udev with "udevadm info -e"; a system without udev lists none)\n');
        if (ble.note) process.stdout.write(`no Bluetooth LE boards listed: ${ble.note}\n`);
        else if (ble.ports.length === 0) process.stdout.write('no bonded Bluetooth LE board offers the RNode or Meshtastic service (bond one with bluetoothctl: pair, trust)\n');
        process.stdout.write(ports.map((p) => `${p.port}\n    ${p.label}${p.by_id ? `\n    ${p.by_id}` : ''}\n`).join(''));
      }
      return 0;
    },
  },
  backup: {
    summary: 'backup <file> [--force]: copy the bridge database while it runs (SQLite online backup) and verify the copy',
    usage: 'fieldbridge backup <file> [--force]',
    options: { force: { type: 'boolean' } },
    positionals: 1,
    run: async (values, positionals, env) => {
      const [{ backupCommand }, { envString }] = await Promise.all([import('./bridge/config/backup.ts'), import('./lib/env.ts')]);
      return backupCommand({ dbPath: envString(env, 'SERVICE_DB_PATH', DEFAULT_DB_PATH), target: positionals[0], force: values.force === true });
    },
  },
  migrate: {
    summary: 'apply the bridge database migrations now (the bridge also does it at start) and print the versions',
    usage: 'fieldbridge migrate',
    run: async (_v, _p, env) => {
      const [{ envString }, { openMigrated }, { currentSchemaVersion }, { silentLogger }] = await Promise.all([
        import('./lib/env.ts'),
        import('./bridge/app.ts'),
        import('./db/migrate.ts'),
        import('./lib/log.ts'),
      ]);
      const dbPath = envString(env, 'SERVICE_DB_PATH', DEFAULT_DB_PATH);
      const { db } = openMigrated(dbPath, {
        ...silentLogger,
        info: (event, fields) => {
          if (event === 'db_migrated') process.stdout.write(`${dbPath}: schema version ${fields?.from} -> ${fields?.to}\n`);
        },
      });
      const version = currentSchemaVersion(db);
      db.close();
      process.stdout.write(`${dbPath}: at schema version ${version} (the latest this fieldbridge knows)\n`);
      return 0;
    },
  },
  openapi: {
    summary: 'print the generated OpenAPI document of the bridge API',
    usage: 'fieldbridge openapi',
    run: async () => {
      const { bridgeOpenApi } = await import('./bridge/app.ts');
      process.stdout.write(JSON.stringify(bridgeOpenApi(), null, 2) + '\n');
      return 0;
    },
  },
};

class UsageError extends Error {}

export async function usage(): Promise<string> {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const summaries = await Promise.all(Object.values(commands).map((c) => resolveLazy(c.summary)));
  const lines = Object.keys(commands).map((name, i) => `  ${name.padEnd(width)}  ${summaries[i]}`);
  return `usage: fieldbridge [command] [options]\n\ncommands:\n${lines.join('\n')}\n\nenvironment and examples: see README.md\n`;
}

async function runBridge(env: NodeJS.ProcessEnv): Promise<number> {
  // First, before the bridge's modules load (src/lib/v8-flags.ts: memory on small boards).
  (await import('./lib/v8-flags.ts')).applyBridgeV8Flags(process.execArgv, env.NODE_OPTIONS ?? '');
  const [{ startBridge }, { checkSeeds }, { uplinkEnv }, { envInt, envListen, envLogLevel, envString }, { createLogger, pickLogFormat }, { serveUntilSignal, systemdNotifier }] =
    await Promise.all([
      import('./bridge/app.ts'),
      import('./bridge/interfaces/seed.ts'),
      import('./bridge/uplink/service.ts'),
      import('./lib/env.ts'),
      import('./lib/log.ts'),
      import('./lib/systemd.ts'),
    ]);
  const log = createLogger({ level: envLogLevel(env, 'SERVICE_LOG_LEVEL'), format: pickLogFormat(env, 'SERVICE_LOG_FORMAT') });
  const listenAt = envListen(env, 'SERVICE_LISTEN', '127.0.0.1:8080');
  const dbPath = envString(env, 'SERVICE_DB_PATH', DEFAULT_DB_PATH);
  const retentionDays = envInt(env, 'SERVICE_RETENTION_DAYS', 30, 0, 36500);
  const seeds = checkSeeds(env);
  const hubOverrides = uplinkEnv(env);
  const notifier = systemdNotifier(env, log);
  const bridge = await startBridge({ dbPath, host: listenAt.host, port: listenAt.port, log, retentionDays, seeds, uplinkEnv: hubOverrides }).catch((e) => {
    throw listenError(e, 'SERVICE_LISTEN', `${listenAt.host}:${listenAt.port}`);
  });
  notifier.ready();

  return serveUntilSignal(log, notifier, (grace) => bridge.close(grace), 'closing the database');
}

/** Turns socket errors at listen time into one line naming the variable to change. */
export function listenError(error: unknown, variable: string, address: string): unknown {
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE') return new StartupError(`${variable}: ${address} is already in use by another process; stop it or choose another address`);
  if (code === 'EACCES') return new StartupError(`${variable}: no permission to listen on ${address} (ports below 1024 need privileges)`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new StartupError(`${variable}: ${address} is not an address of this machine`);
  return error;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(await usage());
    return 0;
  }
  const name = first === undefined || first.startsWith('-') ? 'bridge' : first;
  const args = first === undefined || first.startsWith('-') ? argv : rest;
  const command = commands[name];
  if (!command) {
    process.stderr.write(`fieldbridge: unknown command ${JSON.stringify(name)}\n\n${await usage()}`);
    return 2;
  }
  try {
    const options = command.options === undefined ? {} : await resolveLazy(command.options);
    const parsed = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, ...options }, allowPositionals: true, strict: true });
    if (parsed.values.help) {
      process.stdout.write(`usage: ${command.usageFor ? await command.usageFor(parsed.positionals) : await resolveLazy(command.usage)}\n`);
      return 0;
    }
    if (parsed.positionals.length > (command.positionals ?? 0)) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals.at(-1))}`);
    return await command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals, env);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`fieldbridge ${name}: ${(error as Error).message}\nusage: ${await resolveLazy(command.usage)}\n\n${await usage()}`);
      return 2;
    }
    if (error instanceof StartupError) {
      process.stderr.write(`fieldbridge: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

main(process.argv.slice(2), process.env).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`fieldbridge: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
