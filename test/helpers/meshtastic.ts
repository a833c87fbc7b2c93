import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBridge } from '../../src/bridge/app.ts';
import { formatNodeId } from '../../src/bearers/meshtastic/codec/messages.ts';
import type { MeshtasticDevice } from '../../src/bearers/meshtastic/simulator/device.ts';
import { createLogger } from '../../src/lib/log.ts';
import { apiClient, waitUntil } from './api.ts';
import type { TestBridge } from './bridge.ts';

// Shared by the Meshtastic end-to-end tests (test/e2e/meshtastic-*.test.ts): an in-process
// bridge like startTestBridge's that can also fix the retry jitter and be restarted on the
// same directory, and bounded waits on what the API shows of an interface and a delivery.

/** The driver's and the simulator's timers are unref'd: this keeps a test process alive
 *  while it waits for them. Returns the function that lets it go. */
export function keepProcessAlive(): () => void {
  const timer = setInterval(() => {}, 1000);
  return () => clearInterval(timer);
}

export { waitUntil };

/**
 * An in-process bridge on `dir` (a new temporary directory unless given; a given one is kept,
 * so a second call with it restarts the bridge on the same database and owner key). `random`
 * is the dispatcher's retry jitter: 0.999 makes every wait (almost) its ceiling, so a
 * `retrying` state lasts long enough to be seen.
 */
export async function startMeshBridge(options: { dir?: string; random?: () => number } = {}): Promise<TestBridge> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'fb-mt-'));
  const dbPath = join(dir, 'bridge.db');
  const logs: string[] = [];
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => logs.push(line) });
  const bridge = await startBridge({ dbPath, host: '127.0.0.1', port: 0, log, checkResponses: true, random: options.random });
  const ownerKey = readFileSync(join(dir, 'owner.key'), 'utf8').trim();
  bridge.services.config.write('routing', { rate_limit: { sends_per_minute: 0 } }, 'test');
  const call = apiClient(() => bridge.url, () => ownerKey);
  return {
    bridge,
    url: bridge.url,
    dir,
    dbPath,
    ownerKey,
    logs,
    call,
    stop: async () => {
      await bridge.close(2000);
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Short timeouts, so a failure shows within seconds. */
export const FAST_SETTINGS = { ack_timeout_s: 5, handshake_timeout_s: 5 };
export const FAST_RETRY = { base_s: 0.1, cap_s: 0.2, max_attempts: 3 };

export async function createMeshInterface(t: TestBridge, name: string, device: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await t.call('POST', '/api/interfaces', { body: { name, kind: 'meshtastic', device, settings: FAST_SETTINGS, retry: FAST_RETRY, ...extra } });
  assert.is(r.status, 201, r.text);
  return r.body;
}

/** The interface's entry of GET /api/interfaces/health. */
export async function health(t: TestBridge, name: string): Promise<any> {
  const r = await t.call('GET', '/api/interfaces/health');
  assert.is(r.status, 200, r.text);
  const item = r.body.items.find((i: { name: string }) => i.name === name);
  assert.ok(item, `interface ${name} in the health list: ${r.text}`);
  return item;
}

/** Waits until the health of `name` shows it connected and online; returns that entry. */
export function waitOnline(t: TestBridge, name: string, ms = 15_000): Promise<any> {
  return waitUntil(`${name} online`, async () => {
    const h = await health(t, name);
    return h.connected && h.phase === 'online' && h;
  }, ms);
}

/** Waits until GET /api/deliveries/{id} satisfies `done`; returns the delivery. */
export function waitDelivery(t: TestBridge, id: string, what: string, done: (d: any) => boolean, ms = 15_000): Promise<any> {
  return waitUntil(`delivery ${id} ${what}`, async () => {
    const r = await t.call('GET', `/api/deliveries/${id}`);
    assert.is(r.status, 200, r.text);
    return done(r.body) && r.body;
  }, ms, 10);
}

export const nodeIdOf = (device: MeshtasticDevice): string => formatNodeId(device.num);
