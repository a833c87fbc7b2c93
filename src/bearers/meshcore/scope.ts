import type { Logger } from '../../lib/log.ts';
import { DeviceError } from '../device-error.ts';
import {
  type Command, FLOOD_SCOPE_FROM_VERSION, FLOOD_SCOPE_VARIANT, type FloodScope, hex, parseScope, type RadioMessage, sameBytes, type ScopeChoice,
} from './codec/index.ts';
import type { CommandChannel } from './commands.ts';
import type { MeshCoreSettings } from './settings.ts';

// The flood scope (MeshCore region) of a meshcore interface (docs/protocols/meshcore.md 6.12,
// docs/meshcore.md "Flood scopes"). At every session start the interface's scope is put on
// the radio: as its default scope (CMD_SET_DEFAULT_FLOOD_SCOPE, v11+, kept in its
// preferences, so written only when it differs, then read back), or on v8-v10, which have no
// default, as the scope of the run (CMD_SET_FLOOD_SCOPE_KEY). A delivery may name another
// scope after '#' in its address; it is set for that send only, in one turn with the send, so
// no other command comes between (CommandChannel.exclusive). The scope of the run is cleared
// at the start, so one a previous host left does not linger.

/** The scope the radio's floods go out in, beyond its default: a key, none, or unscoped. */
type Override = Uint8Array | null | 'unscoped';

export type ScopeSupport = 'default' | 'session' | 'none';

/** The interface's setting: a scope, unscoped (`*`), or keep what the radio has (null). */
export function scopeSetting(s: Pick<MeshCoreSettings, 'flood_scope' | 'flood_scope_key'>): ScopeChoice | null {
  if (s.flood_scope == null) return null;
  if (s.flood_scope_key != null) {
    const name = s.flood_scope.trim().replace(/^#/, '');
    return { type: 'region', scope: { name, key: Uint8Array.from(Buffer.from(s.flood_scope_key, 'hex')) } };
  }
  const choice = parseScope(s.flood_scope);
  // The settings schema refused anything else.
  return choice.type === 'invalid' ? null : choice;
}

/** A delivery's address: the node (or `broadcast`) and the scope written after '#'
 *  (`a1b2c3d4e5f6#de-by`, `broadcast#*`), or why the scope is no scope. */
export function splitAddress(to: string): { to: string; scope: ScopeChoice | null } | { problem: string } {
  const at = to.indexOf('#');
  if (at < 0) return { to, scope: null };
  const scope = parseScope(to.slice(at + 1));
  if (scope.type === 'invalid') return { problem: `"${to.slice(at + 1)}" after '#' is no flood scope: ${scope.problem}` };
  return { to: to.slice(0, at), scope };
}

const sameScope = (a: FloodScope | null, b: FloodScope | null) =>
  a === null || b === null ? a === b : a.name === b.name && sameBytes(a.key, b.key);
const sameOverride = (a: Override, b: Override) =>
  a instanceof Uint8Array && b instanceof Uint8Array ? sameBytes(a, b) : a === b;
const isProblem = (w: Override | { problem: string }): w is { problem: string } =>
  w !== null && typeof w === 'object' && !(w instanceof Uint8Array);
const label = (s: FloodScope | null) => (s ? `"${s.name}"` : 'none');

export class FloodScopes {
  readonly #setting: ScopeChoice | null;
  readonly #log: Logger;
  #version = 0;
  #support: ScopeSupport | null = null;
  #radioDefault: FloodScope | null = null;
  #override: Override = null;
  #problem: string | null = null;

  constructor(setting: ScopeChoice | null, log: Logger) {
    this.#setting = setting;
    this.#log = log;
  }

  /** Puts the interface's scope on the radio (session start, after DEVICE_QUERY). */
  async configure(commands: CommandChannel, version: number): Promise<void> {
    this.#version = version;
    this.#radioDefault = null;
    this.#override = null;
    this.#problem = null;
    const cleared = version >= FLOOD_SCOPE_FROM_VERSION.SESSION_KEY
      ? (await commands.run({ type: 'SET_FLOOD_SCOPE_KEY', variant: FLOOD_SCOPE_VARIANT.KEY })).at(-1)
      : undefined;
    if (cleared?.type !== 'OK') {
      this.#support = 'none';
      if (this.#setting?.type === 'region') {
        this.#problem = `the radio (protocol ${version}) has no flood scopes: MeshCore companion firmware 1.10 or later has; its floods go out unscoped`;
        this.#log.warn('meshcore.flood_scope_unsupported', { protocol_version: version, flood_scope: this.#setting.scope.name });
      }
      return;
    }
    if (version < FLOOD_SCOPE_FROM_VERSION.DEFAULT_SCOPE) {
      // No default scope on the radio: the interface's scope is the scope of the run.
      this.#support = 'session';
      if (this.#setting?.type === 'region') {
        await expectOk(commands.run({ type: 'SET_FLOOD_SCOPE_KEY', variant: FLOOD_SCOPE_VARIANT.KEY, key: this.#setting.scope.key }), 'CMD_SET_FLOOD_SCOPE_KEY');
        this.#override = this.#setting.scope.key;
      }
      return;
    }
    this.#support = 'default';
    let current = await readDefault(commands);
    const want = this.#setting === null ? undefined : this.#setting.type === 'region' ? this.#setting.scope : null;
    if (want !== undefined && !sameScope(current, want)) {
      await expectOk(commands.run({ type: 'SET_DEFAULT_FLOOD_SCOPE', scope: want }), 'CMD_SET_DEFAULT_FLOOD_SCOPE');
      const before = current;
      current = await readDefault(commands);
      if (!sameScope(current, want)) {
        throw new DeviceError('ERR_MESHCORE_SCOPE', `the radio reports the default flood scope ${label(current)} after it was set to ${label(want)}`, {
          retryable: true, facts: { command: 'CMD_GET_DEFAULT_FLOOD_SCOPE', answer: `DEFAULT_FLOOD_SCOPE ${label(current)}` },
        });
      }
      this.#log.info('meshcore.flood_scope_set', { from: before?.name ?? null, to: want?.name ?? null, key: want ? hex(want.key) : null });
    }
    this.#radioDefault = current;
  }

  /** Runs `c` with the floods it makes in `choice` (null: the interface's scope): the scope
   *  and the command in one turn. A string says why that scope cannot be had. */
  async run(commands: CommandChannel, choice: ScopeChoice | null, c: Command): Promise<RadioMessage[] | string> {
    const wanted = this.#wanted(choice);
    if (isProblem(wanted)) return wanted.problem;
    return commands.exclusive(async (run) => {
      if (!sameOverride(this.#override, wanted)) {
        const set: Command = wanted === 'unscoped'
          ? { type: 'SET_FLOOD_SCOPE_KEY', variant: FLOOD_SCOPE_VARIANT.UNSCOPED }
          : { type: 'SET_FLOOD_SCOPE_KEY', variant: FLOOD_SCOPE_VARIANT.KEY, ...(wanted ? { key: wanted } : {}) };
        const answer = (await run(set)).at(-1);
        if (answer?.type !== 'OK') return `ERR_MESHCORE_SCOPE: the radio refused CMD_SET_FLOOD_SCOPE_KEY (${answer?.type ?? 'nothing'})`;
        this.#override = wanted;
      }
      return run(c);
    });
  }

  /** The scope a send in `choice` goes out in, for the result's meta: only when the delivery
   *  named one (stats name the interface's). */
  meta(choice: ScopeChoice | null): { flood_scope?: string } {
    const name = choice === null ? null : this.describe(choice);
    return name === null ? {} : { flood_scope: name };
  }

  /** The scope a send in `choice` goes out in. */
  describe(choice: ScopeChoice | null): string | null {
    if (choice?.type === 'unscoped') return '*';
    if (choice?.type === 'region') return choice.scope.name;
    if (this.#support === 'default') return this.#radioDefault?.name ?? '*';
    if (this.#support === 'session') return this.#setting?.type === 'region' ? this.#setting.scope.name : '*';
    return this.#support === 'none' ? '*' : null;
  }

  stats(): Record<string, unknown> {
    const s = this.#setting;
    return {
      flood_scope: s === null ? null : s.type === 'unscoped' ? '*' : s.scope.name,
      flood_scope_support: this.#support,
      radio_flood_scope: this.#radioDefault?.name ?? null,
      radio_flood_scope_key: this.#radioDefault ? hex(this.#radioDefault.key) : null,
      flood_scope_problem: this.#problem,
    };
  }

  #wanted(choice: ScopeChoice | null): Override | { problem: string } {
    const v = this.#version;
    const unsupported = (what: string) => ({ problem: `ERR_MESHCORE_SCOPE_UNSUPPORTED: ${what}` });
    if (this.#support === 'none' || this.#support === null) {
      if (choice?.type === 'region') return unsupported(`the radio (protocol ${v}) has no flood scopes (MeshCore companion firmware 1.10 or later has)`);
      return null; // its floods are unscoped anyway
    }
    const base: Override = this.#support === 'session' && this.#setting?.type === 'region' ? this.#setting.scope.key : null;
    if (choice === null) return base;
    if (choice.type === 'region') {
      const def = this.#support === 'default' ? this.#radioDefault : null;
      return def && sameBytes(def.key, choice.scope.key) ? null : choice.scope.key;
    }
    // Unscoped: without a default scope, clearing the scope of the run is enough.
    if (this.#support === 'session' || this.#radioDefault === null) return null;
    if (v >= FLOOD_SCOPE_FROM_VERSION.UNSCOPED) return 'unscoped';
    return unsupported(`the radio (protocol ${v}, companion 1.15) cannot send one message unscoped while it has a default scope; companion 1.16 (protocol 12) can`);
  }
}

async function readDefault(commands: CommandChannel): Promise<FloodScope | null> {
  const answer = (await commands.run({ type: 'GET_DEFAULT_FLOOD_SCOPE' })).at(-1);
  if (answer?.type !== 'DEFAULT_FLOOD_SCOPE') throw refusedScope('CMD_GET_DEFAULT_FLOOD_SCOPE', answer);
  return answer.scope;
}

async function expectOk(answer: Promise<RadioMessage[]>, command: string): Promise<void> {
  const last = (await answer).at(-1);
  if (last?.type !== 'OK') throw refusedScope(command, last);
}

function refusedScope(command: string, answer: RadioMessage | undefined): DeviceError {
  return new DeviceError('ERR_MESHCORE_SCOPE', `the radio answered ${command} with ${answer?.type ?? 'nothing'}${answer?.type === 'ERR' ? ` (code ${answer.code})` : ''}`, {
    retryable: true, facts: { command, answer: answer?.type ?? 'nothing', ...(answer?.type === 'ERR' && answer.code !== undefined ? { radioError: answer.code } : {}) },
  });
}
