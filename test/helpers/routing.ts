import * as assert from 'uvu/assert';
import type { CallResult } from './bridge.ts';
import type { Call } from './api.ts';

// Assertions shared by the routing API tests: what a refused request must look like to the
// operator (status, problem type, the field named), and small builders for sim interfaces and
// rules so each test says only what it is about.

/** A 4xx problem+json answer naming every given field path in `errors`. */
export function assertProblem(r: CallResult, status: number, paths: string[] = [], detail?: RegExp): void {
  assert.is(r.status, status, `expected ${status}: ${r.text}`);
  assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.is(r.body.status, status);
  const named = (r.body.errors ?? []).map((e: { path: string }) => e.path);
  for (const p of paths) assert.ok(named.includes(p), `errors name ${p}: ${r.text}`);
  if (detail) assert.match(r.body.detail, detail);
}

export async function createSim(call: Call, name: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await call('POST', '/api/interfaces', { body: { name, kind: 'sim', settings: {}, ...extra } });
  assert.is(r.status, 201, r.text);
  return r.body;
}

export function ruleBody(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, match: { direction: 'outbound' }, schedule: null, action: 'store', ...extra };
}

export async function createRule(call: Call, name: string, extra: Record<string, unknown> = {}): Promise<any> {
  const r = await call('POST', '/api/access-rules', { body: ruleBody(name, extra) });
  assert.is(r.status, 201, r.text);
  return r.body;
}

export async function sendText(call: Call, to: string, text = 'hello'): Promise<{ message: any; deliveries: any[] }> {
  const r = await call('POST', '/api/messages/send', { body: { to, text } });
  assert.is(r.status, 202, r.text);
  return r.body;
}

/** Lets promise callbacks and zero-delay I/O run (the dispatcher settles sends this way). */
export const settle = (rounds = 5) => new Promise<void>((resolve) => {
  let n = 0;
  const next = () => (++n >= rounds ? resolve() : setImmediate(next));
  setImmediate(next);
});

/** Asks `probe` every 10 ms, `rounds` times at most, until it answers something: for what the
 *  bridge does on its own turns (escalations, sends) while a fake clock stands still. */
export async function until<T>(what: string, probe: () => Promise<T | false | undefined | null>, rounds = 500): Promise<T> {
  for (let i = 0; i < rounds; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
