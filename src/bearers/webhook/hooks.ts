import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DriverState } from '../bearer.ts';

// Inbound hooks (docs/webhooks.md, "Inbound hooks"): named doors into one webhook interface,
// each with its own token. A hook is kept in its interface's driver state (BearerContext.state),
// so it goes with the interface and never travels in a configuration export; only the token's
// SHA-256 digest is kept, the token itself is shown once, when the hook is made.

/** The driver-state key the hooks of an interface are kept under, as JSON. */
const KEY = 'hooks';

/** Hook names: what the URL /api/hooks/{name} carries. */
export const HOOK_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Hook tokens start with this, so a log scanner or a person tells them from API keys. */
export const HOOK_TOKEN_PREFIX = 'fbh_';

export interface StoredHook {
  name: string;
  token_sha256: string;
  created_at: string;
  last_used_at: string | null;
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** A fresh token: the prefix and 32 random bytes, base64url. */
export function newHookToken(): string {
  return `${HOOK_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function readHooks(state: Pick<DriverState, 'get'>): StoredHook[] {
  const raw = state.get(KEY);
  if (raw === null) return [];
  try {
    const list = JSON.parse(raw) as unknown;
    return Array.isArray(list) ? (list as StoredHook[]).filter((h) => typeof h?.name === 'string' && typeof h?.token_sha256 === 'string') : [];
  } catch {
    return [];
  }
}

function writeHooks(state: DriverState, hooks: readonly StoredHook[]): void {
  state.set(KEY, hooks.length === 0 ? null : JSON.stringify(hooks));
}

/** Adds a hook and returns its token (the only time it is seen). */
export function addHook(state: DriverState, name: string, nowIso: string): string {
  const token = newHookToken();
  writeHooks(state, [...readHooks(state), { name, token_sha256: digest(token), created_at: nowIso, last_used_at: null }]);
  return token;
}

/** Removes a hook; false when the interface has none of that name. */
export function removeHook(state: DriverState, name: string): boolean {
  const hooks = readHooks(state);
  const kept = hooks.filter((h) => h.name !== name);
  if (kept.length === hooks.length) return false;
  writeHooks(state, kept);
  return true;
}

/** Whether `token` is the hook's (compared in constant time). */
export function tokenMatches(hook: StoredHook, token: string): boolean {
  const want = Buffer.from(hook.token_sha256, 'hex');
  const got = Buffer.from(digest(token), 'hex');
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Notes when the hook was last used (at most once a minute, to spare the flash). */
export function touchHook(state: DriverState, name: string, nowIso: string): void {
  const hooks = readHooks(state);
  const hook = hooks.find((h) => h.name === name);
  if (!hook) return;
  if (hook.last_used_at !== null && Date.parse(nowIso) - Date.parse(hook.last_used_at) < 60_000) return;
  hook.last_used_at = nowIso;
  writeHooks(state, hooks);
}
