import * as assert from 'uvu/assert';
import type { TestBridge } from './bridge.ts';
import { health, keepProcessAlive, startMeshBridge, waitDelivery, waitOnline, waitUntil } from './meshtastic.ts';

// Shared by the SMS end-to-end tests (test/e2e/sms-*.test.ts). The in-process bridge, the
// keep-alive and the bounded waits on health and deliveries are the Meshtastic helpers' (they
// know nothing of the kind); this adds what is SMS-specific: creating an sms interface with
// short timings, and reading what the API shows of messages.

export { health, keepProcessAlive, waitDelivery, waitOnline, waitUntil };

/** An in-process bridge (see startMeshBridge: `dir` restarts on the same database, `random`
 *  fixes the retry jitter). */
export const startSmsBridge = startMeshBridge;

/** Fast retries, so `retrying` and `dead` show within seconds. */
export const SMS_FAST_RETRY = { base_s: 1, cap_s: 1, max_attempts: 3 };

export async function createSmsInterface(t: TestBridge, name: string, device: string, settings: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await t.call('POST', '/api/interfaces', { body: { name, kind: 'sms', device, settings: { poll_s: 5, ...settings }, retry: SMS_FAST_RETRY, ...extra } });
  assert.is(r.status, 201, r.text);
  return r.body;
}

/** GET /api/messages?direction=inbound: every stored inbound message (newest first). */
export async function inboundMessages(call: TestBridge['call']): Promise<any[]> {
  const r = await call('GET', '/api/messages?direction=inbound&limit=100');
  assert.is(r.status, 200, r.text);
  return r.body.items;
}
