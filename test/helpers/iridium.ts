import * as assert from 'uvu/assert';
import type { HostedDevice } from '../../src/bearers/shared/simulators/pty.ts';
import type { TestBridge } from './bridge.ts';
import { SMS_FAST_RETRY, health, inboundMessages, keepProcessAlive, startSmsBridge, waitDelivery, waitOnline, waitUntil } from './sms.ts';

// Shared by the Iridium end-to-end tests (test/e2e/iridium-*.test.ts). The in-process bridge,
// the keep-alive, the bounded waits and the inbound message list are the SMS and Meshtastic
// helpers' (they know nothing of the kind); this adds what is Iridium-specific: creating an
// iridium interface with fast pacing, reading its stats, and a tap that keeps the bytes the
// bridge wrote to a simulated modem.

export { health, inboundMessages, keepProcessAlive, waitDelivery, waitOnline, waitUntil };

/** An in-process bridge (startMeshBridge: `dir` restarts on the same database, `random`
 *  fixes the retry jitter). With a fake clock: startTestBridge({ clock, dir }). */
export const startIridiumBridge = startSmsBridge;

/** No pacing between sessions and none after a failed one, so retries come within seconds. */
export const IRIDIUM_FAST = { session_interval_s: 0, failure_backoff_s: 0 };

export async function createIridiumInterface(t: TestBridge, name: string, device: string, settings: Record<string, unknown> = {}, retry: Record<string, unknown> = SMS_FAST_RETRY): Promise<any> {
  const r = await t.call('POST', '/api/interfaces', { body: { name, kind: 'iridium', device, settings: { ...IRIDIUM_FAST, ...settings }, retry } });
  assert.is(r.status, 201, r.text);
  return r.body;
}

/** `stats` of GET /api/interfaces/{id}/stats (credits and counters, docs/iridium.md "Health"). */
export async function interfaceStats(t: TestBridge, ref: string): Promise<any> {
  const r = await t.call('GET', `/api/interfaces/${encodeURIComponent(ref)}/stats`);
  assert.is(r.status, 200, r.text);
  return r.body.stats;
}

/** Stands between a simulator transport and its device and keeps every byte the host sent,
 *  in order, before passing it on. (The device replays bytes that came while it was busy
 *  through its own fromHost; those do not pass the tap again, so nothing is kept twice.) */
export class HostTap implements HostedDevice {
  readonly #device: HostedDevice;
  #chunks: Buffer[] = [];
  #length = 0;

  constructor(device: HostedDevice) {
    this.#device = device;
  }

  attachHost(write: (bytes: Uint8Array) => void): void {
    this.#device.attachHost(write);
  }

  detachHost(): void {
    this.#device.detachHost();
  }

  fromHost(bytes: Uint8Array): void {
    const copy = Buffer.from(bytes);
    this.#chunks.push(copy);
    this.#length += copy.length;
    this.#device.fromHost(bytes);
  }

  /** How many bytes the host has sent so far (a mark for since()). */
  get length(): number {
    return this.#length;
  }

  /** The bytes the host sent after `mark`. */
  since(mark: number): Buffer {
    return Buffer.concat(this.#chunks).subarray(mark);
  }
}
