import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startBridge, type RunningBridge } from '../src/bridge/app.ts';
import { DEFAULT_RETRY_POLICY } from '../src/bridge/deliveries/backoff.ts';
import { createLogger } from '../src/lib/log.ts';

// Bytes written to the disk per routed message (issue 22: the SD card is what fails first in a
// field gateway). A bridge in this process routes messages one at a time to a sim interface,
// each waited for until delivered; /proc/self/io `write_bytes` (bytes this process caused to be
// written to storage, page cache included) before and after, divided by the messages. The
// baseline is what the rows themselves take: the database after VACUUM with the messages,
// minus the same database without them. Linux only.

const MESSAGES = 200;
const quiet = createLogger({ level: 'error', format: 'json', write: () => {} });

const writeBytes = () => Number(/write_bytes:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? NaN);

async function bridgeWithRoute(dir: string): Promise<RunningBridge> {
  const bridge = await startBridge({ dbPath: join(dir, 'bridge.db'), host: '127.0.0.1', port: 0, log: quiet });
  const { services } = bridge;
  services.config?.write('routing', { rate_limit: { sends_per_minute: 0 } }, 'bench');
  await services.interfaces.create({ name: 'w-0', kind: 'sim', enabled: true, device: 'sim://bench-writes', settings: {}, transforms: { inbound: [], outbound: [] }, retry: DEFAULT_RETRY_POLICY });
  services.rules.create({ name: 'to-w', match: { direction: 'outbound', to: ['!write000'] }, schedule: null, action: 'forward', destinations: [{ interface: 'w-0', to: '{to}' }] });
  return bridge;
}

async function route(bridge: RunningBridge, i: number): Promise<void> {
  const [r] = bridge.services.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!write000', channel: null, kind: 'text', text: `bench write ${i}`, payload: null });
  const id = r.deliveries[0].id;
  for (let n = 0; ; n++) {
    if (bridge.services.deliveries.get(id)?.state === 'delivered') return;
    if (n > 5000) throw new Error(`message ${i} was not delivered`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Bytes of the database after VACUUM (a copy: the live file is left alone). */
function vacuumedBytes(dbPath: string, dir: string, name: string): number {
  const out = join(dir, `${name}.db`);
  const db = new DatabaseSync(dbPath);
  try {
    db.exec(`VACUUM INTO '${out.replaceAll("'", "''")}'`);
  } finally {
    db.close();
  }
  return statSync(out).size;
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fb-bench-writes-'));
  try {
    const bridge = await bridgeWithRoute(dir);
    // Warm-up: the first messages create pages every later one reuses.
    for (let i = 0; i < 20; i++) await route(bridge, i);
    const empty = vacuumedBytes(join(dir, 'bridge.db'), dir, 'before');
    const before = writeBytes();
    for (let i = 0; i < MESSAGES; i++) await route(bridge, 20 + i);
    const written = writeBytes() - before;
    await bridge.close(1000);
    const rows = (vacuumedBytes(join(dir, 'bridge.db'), dir, 'after') - empty) / MESSAGES;
    const perMessage = written / MESSAGES;
    process.stdout.write(`disk writes (${MESSAGES} messages routed one at a time to a sim interface, /proc/self/io write_bytes)\n`);
    process.stdout.write(`  baseline: the rows' own bytes (VACUUMed)     ${Math.round(rows).toLocaleString('en-US').padStart(9)} bytes/message\n`);
    process.stdout.write(`  bridge: bytes written per routed message    ${Math.round(perMessage).toLocaleString('en-US').padStart(9)} bytes/message   ratio ${(perMessage / rows).toFixed(1)}x (issue 22 target: at most 24,000 bytes)\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
