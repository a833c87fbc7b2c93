import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { concat } from '../../shared/codec/bytes.ts';

// A small table-driven protobuf codec for the Meshtastic messages (docs/protocols/meshtastic.md
// 2.3, 2.6). Each message is a plain object whose keys are the proto field names; a schema
// maps every key to its field number and type, and the message's TypeScript type is derived
// from the schema (MessageOf), so the two cannot disagree. No generated Meshtastic code is
// used (the generated packages are GPL); only field numbers and types are taken from the
// .proto files.
//
// Plain-object conventions, the same for every message:
// - Every field is optional. A plain proto3 field is absent when it holds its default (0,
//   false, '', empty bytes): the decoder leaves such fields out and the encoder does not write
//   them. Fields with explicit presence (proto3 `optional`, sub-messages, oneof members) are
//   kept and written even when they hold the default.
// - Oneof members are flat fields (`packet`, `my_info`, ...); at most one of a group may be set.
//   Decoding keeps the last one on the wire, as protobuf does; encoding refuses two.
// - `$unknown` holds the raw bytes (tag and value) of every field the schema does not know, so
//   that decode-change-encode sends back what a newer firmware added (a set_config must carry
//   the whole variant, docs/protocols/meshtastic.md 2.7).
// - A sub-message this codec does not model is typed as bytes (its encoded body), which is the
//   same wire format and survives a round trip untouched.

export type Kind =
  | 'uint32' | 'int32' | 'sint32' | 'enum' | 'bool'
  | 'fixed32' | 'sfixed32' | 'float'
  | 'string' | 'bytes' | 'message';

/** One field of a schema. `V` is the TypeScript type of its value (a phantom, never set). */
export interface FieldSpec<V> {
  readonly no: number;
  readonly kind: Kind;
  /** Explicit presence: proto3 `optional`, messages and oneof members are written even when
   *  they hold the default value; plain proto3 scalars are left out when they do. */
  readonly presence: boolean;
  readonly repeated: boolean;
  readonly oneof?: string;
  readonly schema?: MessageSchema<unknown>;
  readonly __value?: V;
}

type FieldKey<T> = Exclude<keyof T, '$unknown'> & string;
export type FieldSpecs<T> = { readonly [K in FieldKey<T>]-?: FieldSpec<NonNullable<T[K]>> };

interface Entry {
  readonly key: string;
  readonly spec: FieldSpec<unknown>;
}

export interface MessageSchema<T> {
  /** The proto message name, used in error texts and unknown-field notes. */
  readonly name: string;
  readonly fields: FieldSpecs<T>;
  readonly byNo: ReadonlyMap<number, Entry>;
  /** Fields in ascending field-number order: the order encoders write them. */
  readonly ordered: readonly Entry[];
}

/** Fields every message object may carry besides its proto fields. */
export interface Unknown {
  /** Raw bytes (tag and value) of the fields the schema does not know, re-emitted by encode. */
  $unknown?: Uint8Array;
}

/** A schema literal: field specs by property name. */
export type Fields = Readonly<Record<string, FieldSpec<unknown>>>;

type ValueOf<S> = S extends FieldSpec<infer V> ? V : never;

/** The plain object that a schema literal describes: every field optional (see the conventions
 *  above), plus `$unknown`. It maps the literal's own keys, so a doc comment written on a schema
 *  line shows on the message property too. */
export type MessageOfFields<F extends Fields> = { -readonly [K in keyof F]?: ValueOf<F[K]> } & Unknown;

/** The message type of a schema: `export type Data = MessageOf<typeof DATA>`. */
export type MessageOf<S> = S extends MessageSchema<infer T> ? T : never;

export function defineMessage<F extends Fields>(name: string, fields: F): MessageSchema<MessageOfFields<F>> {
  const byNo = new Map<number, Entry>();
  for (const [key, spec] of Object.entries(fields) as [string, FieldSpec<unknown>][]) {
    if (byNo.has(spec.no)) throw new Error(`${name}: field number ${spec.no} used twice`);
    byNo.set(spec.no, { key, spec });
  }
  const ordered = [...byNo.values()].sort((a, b) => a.spec.no - b.spec.no);
  return { name, fields: fields as unknown as FieldSpecs<MessageOfFields<F>>, byNo, ordered };
}

/** The field number of `key` in `schema` (for logs and tests). */
export function fieldNo<T>(schema: MessageSchema<T>, key: FieldKey<T>): number {
  return (schema.fields[key] as FieldSpec<unknown>).no;
}

interface Options {
  /** Proto3 `optional`: the field has explicit presence. */
  optional?: boolean;
  /** Name of the oneof group this field belongs to. */
  oneof?: string;
}

const scalar = <V>(kind: Kind) => (no: number, opts: Options = {}): FieldSpec<V> => ({
  no,
  kind,
  presence: opts.optional === true || opts.oneof !== undefined,
  repeated: false,
  ...(opts.oneof !== undefined ? { oneof: opts.oneof } : {}),
});

/** Field constructors used by the schemas. */
export const field = {
  uint32: scalar<number>('uint32'),
  int32: scalar<number>('int32'),
  sint32: scalar<number>('sint32'),
  /** Enums travel as int32 varints; values outside the table are kept as numbers. */
  enum: scalar<number>('enum'),
  bool: scalar<boolean>('bool'),
  fixed32: scalar<number>('fixed32'),
  sfixed32: scalar<number>('sfixed32'),
  float: scalar<number>('float'),
  string: scalar<string>('string'),
  /** bytes, or a sub-message kept as its encoded body. */
  bytes: scalar<Uint8Array>('bytes'),
  message: <T>(no: number, schema: MessageSchema<T>, opts: Pick<Options, 'oneof'> = {}): FieldSpec<T> => ({
    no,
    kind: 'message',
    presence: true,
    repeated: false,
    schema: schema as MessageSchema<unknown>,
    ...(opts.oneof !== undefined ? { oneof: opts.oneof } : {}),
  }),
  repeated: <V>(spec: FieldSpec<V>): FieldSpec<V[]> => ({ ...spec, repeated: true, presence: false }) as FieldSpec<V[]>,
};

const VARINT_KINDS = new Set<Kind>(['uint32', 'int32', 'sint32', 'enum', 'bool']);
const FIXED32_KINDS = new Set<Kind>(['fixed32', 'sfixed32', 'float']);

function wireTypeOf(kind: Kind): WireType {
  if (VARINT_KINDS.has(kind)) return WireType.Varint;
  if (FIXED32_KINDS.has(kind)) return WireType.Bit32;
  return WireType.LengthDelimited;
}

// ---------------------------------------------------------------------------------------------
// Decoding

export type DecodeResult<T> =
  | { ok: true; value: T; unknown: readonly string[] }
  | { ok: false; error: string };

/** Unknown-field notes kept per decode, so a hostile input cannot grow the list. */
const MAX_UNKNOWN_NOTES = 32;

interface Context {
  readonly buf: Uint8Array;
  readonly unknown: string[];
}

function note(ctx: Context, text: string): void {
  if (ctx.unknown.length < MAX_UNKNOWN_NOTES && !ctx.unknown.includes(text)) ctx.unknown.push(text);
}

/** Decodes one message. Never throws: bad input gives `{ ok: false, error }`. Unknown fields
 *  are skipped, kept in `$unknown` and named in `unknown` ("MeshPacket.23"). */
export function decodeMessage<T>(schema: MessageSchema<T>, bytes: Uint8Array): DecodeResult<T> {
  try {
    const reader = new BinaryReader(bytes);
    const ctx: Context = { buf: bytes, unknown: [] };
    const value = readMessage(schema, reader, bytes.length, ctx);
    return { ok: true, value, unknown: ctx.unknown };
  } catch (error) {
    return { ok: false, error: `${schema.name}: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function copy(bytes: Uint8Array): Uint8Array {
  // A plain copy: the caller's buffer may be reused, and Buffer#slice would only be a view.
  return new Uint8Array(bytes);
}

function readScalar(kind: Kind, r: BinaryReader): unknown {
  switch (kind) {
    case 'uint32': return r.uint32();
    case 'int32': case 'enum': return r.int32();
    case 'sint32': return r.sint32();
    case 'bool': return r.bool();
    case 'fixed32': return r.fixed32();
    case 'sfixed32': return r.sfixed32();
    case 'float': return r.float();
    case 'string': return r.string();
    case 'bytes': return copy(r.bytes());
    default: throw new Error(`no scalar reader for ${kind}`);
  }
}

function readMessage<T>(schema: MessageSchema<T>, r: BinaryReader, end: number, ctx: Context): T {
  const out: Record<string, unknown> = {};
  const unknownParts: Uint8Array[] = [];
  while (r.pos < end) {
    const start = r.pos;
    const [no, wireType] = r.tag();
    const entry = schema.byNo.get(no);
    const spec = entry?.spec;
    const expected = spec ? wireTypeOf(spec.kind) : undefined;
    const packed = spec !== undefined && spec.repeated && expected !== WireType.LengthDelimited && wireType === WireType.LengthDelimited;
    if (!entry || !spec || (wireType !== expected && !packed)) {
      r.skip(wireType, no);
      if (r.pos > end) throw new Error(`field ${no} runs past the end of ${schema.name}`);
      unknownParts.push(ctx.buf.subarray(start, r.pos));
      note(ctx, spec ? `${schema.name}.${no} (wire type ${wireType})` : `${schema.name}.${no}`);
      continue;
    }
    let value: unknown;
    if (packed) {
      const length = r.uint32();
      const stop = r.pos + length;
      if (stop > end) throw new Error(`packed field ${entry.key} runs past the end of ${schema.name}`);
      const list = (out[entry.key] as unknown[] | undefined) ?? [];
      while (r.pos < stop) list.push(readScalar(spec.kind, r));
      if (r.pos !== stop) throw new Error(`packed field ${entry.key} of ${schema.name} is cut`);
      if (list.length > 0) out[entry.key] = list;
      continue;
    }
    if (spec.kind === 'message') {
      const length = r.uint32();
      const stop = r.pos + length;
      if (stop > end) throw new Error(`field ${entry.key} runs past the end of ${schema.name}`);
      value = readMessage(spec.schema as MessageSchema<unknown>, r, stop, ctx);
    } else {
      value = readScalar(spec.kind, r);
    }
    if (r.pos > end) throw new Error(`field ${entry.key} runs past the end of ${schema.name}`);
    if (spec.repeated) {
      const list = (out[entry.key] as unknown[] | undefined) ?? [];
      list.push(value);
      out[entry.key] = list;
    } else if (!spec.presence && isDefault(spec.kind, value)) {
      // proto3: a plain field holding its default is the same as an absent one. Leaving it
      // out keeps decoded objects canonical (decode-encode-decode gives the same object).
      delete out[entry.key];
    } else {
      if (spec.oneof !== undefined) {
        for (const other of schema.ordered) if (other.spec.oneof === spec.oneof) delete out[other.key];
      }
      out[entry.key] = value;
    }
  }
  if (r.pos !== end) throw new Error(`${schema.name} ends inside a field`);
  if (unknownParts.length > 0) out.$unknown = concat(...unknownParts);
  return out as T;
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** Encodes one message. Throws (a caller's programming error) when a value does not fit its
 *  proto type (say a negative uint32 or a fractional fixed32) or two members of one oneof
 *  are set. */
export function encodeMessage<T>(schema: MessageSchema<T>, message: T): Uint8Array {
  const w = new BinaryWriter();
  writeMessage(schema, message, w);
  return w.finish();
}

function isDefault(kind: Kind, value: unknown): boolean {
  if (kind === 'bool') return value === false;
  if (kind === 'string') return value === '';
  if (kind === 'bytes') return (value as Uint8Array).length === 0;
  return value === 0;
}

function writeScalar(kind: Kind, value: unknown, w: BinaryWriter): void {
  switch (kind) {
    case 'uint32': w.uint32(value as number); break;
    case 'int32': case 'enum': w.int32(value as number); break;
    case 'sint32': w.sint32(value as number); break;
    case 'bool': w.bool(value as boolean); break;
    case 'fixed32': w.fixed32(value as number); break;
    case 'sfixed32': w.sfixed32(value as number); break;
    case 'float': w.float(value as number); break;
    case 'string': w.string(value as string); break;
    case 'bytes': w.bytes(value as Uint8Array); break;
    default: throw new Error(`no scalar writer for ${kind}`);
  }
}

function writeMessage<T>(schema: MessageSchema<T>, message: T, w: BinaryWriter): void {
  const m = message as Record<string, unknown>;
  const oneofSet = new Map<string, string>();
  for (const { key, spec } of schema.ordered) {
    const value = m[key];
    if (value === undefined) continue;
    if (spec.oneof !== undefined) {
      const other = oneofSet.get(spec.oneof);
      if (other !== undefined) throw new Error(`${schema.name}: ${other} and ${key} are both set, but they share oneof ${spec.oneof}`);
      oneofSet.set(spec.oneof, key);
    }
    try {
      if (spec.repeated) {
        const list = value as unknown[];
        if (list.length === 0) continue;
        if (wireTypeOf(spec.kind) !== WireType.LengthDelimited) {
          // proto3 packs repeated numbers by default (docs/protocols/meshtastic.md 2.6).
          w.tag(spec.no, WireType.LengthDelimited).fork();
          for (const item of list) writeScalar(spec.kind, item, w);
          w.join();
        } else {
          for (const item of list) writeOne(spec, item, w);
        }
        continue;
      }
      if (!spec.presence && isDefault(spec.kind, value)) continue;
      writeOne(spec, value, w);
    } catch (error) {
      throw new Error(`${schema.name}.${key}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (m.$unknown instanceof Uint8Array && m.$unknown.length > 0) w.raw(m.$unknown);
}

function writeOne(spec: FieldSpec<unknown>, value: unknown, w: BinaryWriter): void {
  if (spec.kind === 'message') {
    w.tag(spec.no, WireType.LengthDelimited).fork();
    writeMessage(spec.schema as MessageSchema<unknown>, value, w);
    w.join();
    return;
  }
  w.tag(spec.no, wireTypeOf(spec.kind));
  writeScalar(spec.kind, value, w);
}

/** Which member of a oneof group is set, or undefined. */
export function oneofCase<T>(schema: MessageSchema<T>, message: T, group: string): FieldKey<T> | undefined {
  const m = message as Record<string, unknown>;
  for (const { key, spec } of schema.ordered) if (spec.oneof === group && m[key] !== undefined) return key as FieldKey<T>;
  return undefined;
}
