import {
  type Command, ERR_CODE, FLOOD_SCOPE_FROM_VERSION, FLOOD_SCOPE_VARIANT, type FloodScope, type RadioMessage, SCOPE_NAME_FIELD_SIZE, utf8,
} from '../codec/index.ts';

// The flood scope of a simulated companion radio (docs/protocols/meshcore.md 6.12), as
// examples/companion_radio/MyMesh.cpp keeps it: a default scope (name and key) in the radio's
// preferences (v11+), a scope for this run set by CMD_SET_FLOOD_SCOPE_KEY (v8+, lost at a
// restart), and the "send unscoped" flag (v12+). Floods go out with the run's scope if set,
// else the default's key, or unscoped when the flag is set (MyMesh::sendFloodScoped).

export class SimFloodScope {
  readonly version: number;
  default: FloodScope | null;
  /** The scope of this run (send_scope); null: the default applies. */
  session: Uint8Array | null = null;
  /** send_unscoped. */
  unscoped = false;

  constructor(version: number, initial?: FloodScope) {
    this.version = version;
    this.default = initial && version >= FLOOD_SCOPE_FROM_VERSION.DEFAULT_SCOPE ? { name: initial.name, key: initial.key.slice() } : null;
  }

  /** The key the radio's floods carry a transport code of, or null for unscoped floods. */
  get key(): Uint8Array | null {
    if (this.unscoped) return null;
    return this.session ?? this.default?.key ?? null;
  }

  /** The answer to a flood-scope command, or null when `c` is another command. Commands this
   *  firmware version does not have are answered as unknown ones are. */
  command(c: Command): RadioMessage | null {
    const unsupported: RadioMessage = { type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD };
    switch (c.type) {
      case 'SET_FLOOD_SCOPE_KEY':
        if (this.version < FLOOD_SCOPE_FROM_VERSION.SESSION_KEY) return unsupported;
        if (c.variant === FLOOD_SCOPE_VARIANT.KEY) {
          this.session = c.key && c.key.some((b) => b !== 0) ? c.key.slice() : null; // an all-zero key is "no scope" (TransportKey::isNull)
          this.unscoped = false;
          return { type: 'OK' };
        }
        if (c.variant === FLOOD_SCOPE_VARIANT.UNSCOPED && this.version >= FLOOD_SCOPE_FROM_VERSION.UNSCOPED) {
          this.unscoped = true;
          return { type: 'OK' };
        }
        return unsupported;
      case 'SET_DEFAULT_FLOOD_SCOPE': {
        if (this.version < FLOOD_SCOPE_FROM_VERSION.DEFAULT_SCOPE) return unsupported;
        if (!c.scope) {
          this.default = null;
          return { type: 'OK' };
        }
        const n = utf8(c.scope.name).length;
        if (n === 0 || n >= SCOPE_NAME_FIELD_SIZE) return { type: 'ERR', code: ERR_CODE.ILLEGAL_ARG };
        this.default = { name: c.scope.name, key: c.scope.key.slice() };
        return { type: 'OK' };
      }
      case 'GET_DEFAULT_FLOOD_SCOPE':
        if (this.version < FLOOD_SCOPE_FROM_VERSION.DEFAULT_SCOPE) return unsupported;
        return { type: 'DEFAULT_FLOOD_SCOPE', scope: this.default ? { name: this.default.name, key: this.default.key.slice() } : null };
      default:
        return null;
    }
  }
}
