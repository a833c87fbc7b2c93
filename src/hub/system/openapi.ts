import { startHub } from '../app.ts';
import { silentLogger } from '../../lib/log.ts';

// The hub's OpenAPI document as GET /api/openapi.json serves it. It is taken
// from a hub started in-process (an in-memory database, port 0 on the loopback, no MQTT) rather
// than from a second list of routes, so the checked-in copy (openapi/hub.json, written by
// `npm run openapi` through scripts/hub-openapi.ts) can only differ from the served one by
// being stale, which test/hub/system/openapi.test.ts catches.

export async function hubOpenApi(): Promise<Record<string, unknown>> {
  const hub = await startHub({ store: { sqlitePath: ':memory:' }, host: '127.0.0.1', port: 0, log: silentLogger });
  try {
    const res = await fetch(`${hub.url}/api/openapi.json`);
    if (!res.ok) throw new Error(`GET /api/openapi.json answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  } finally {
    await hub.close(1000);
  }
}

/** The document as the checked-in file holds it: 2-space JSON and a final newline (like openapi/bridge.json). */
export function serializeOpenApi(doc: unknown): string {
  return JSON.stringify(doc, null, 2) + '\n';
}
