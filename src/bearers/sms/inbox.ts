import { createHash } from 'node:crypto';
import { type InboundFrame, TO_THIS_STATION } from '../bearer.ts';
import { concat as concatBytes } from '../shared/codec/bytes.ts';
import type { SmsDeliver } from './codec/index.ts';

// Received SMS on their way from the SIM to the pipeline (docs/sms.md, "Receiving"). A single
// SMS is ready at once; the parts of a long message wait, in memory, until every part is there
// (they stay on the SIM meanwhile, so a restart reads them again), and are stored as one
// message. Parts still incomplete after the reassembly timeout are stored as they are, with
// meta.incomplete. The same part read twice (a repeated listing) counts once. Pure but for
// the times it is given.

/** A message ready for the pipeline, and the SIM indexes to delete once it is stored. */
export interface ReadyMessage {
  frame: InboundFrame;
  indexes: number[];
}

interface Part {
  sequence: number;
  deliver: SmsDeliver;
  /** SIM indexes holding this part (a duplicate adds its index). */
  indexes: number[];
}

interface Group {
  total: number;
  reference: number;
  firstAt: number;
  parts: Map<number, Part>;
}

export class Inbox {
  /** Prefix of every dedupe key: the interface, so two SIMs receiving the same text (an
   *  alert sent to both numbers) store it twice, once each. */
  readonly #scope: string;
  readonly #groups = new Map<string, Group>();
  /** Indexes already taken (so a repeated listing is not read twice before deletion). */
  readonly #taken = new Set<number>();

  constructor(scope: string) {
    this.#scope = scope;
  }

  has(index: number): boolean {
    return this.#taken.has(index);
  }

  /** Takes an index before reading it; false when a read of it is already under way (a
   *  listing and a +CMTI can name the same slot). Released after deletion or a failed read. */
  claim(index: number): boolean {
    if (this.#taken.has(index)) return false;
    this.#taken.add(index);
    return true;
  }

  /** Forgets an index after its deletion (the modem reuses indexes). */
  release(index: number): void {
    this.#taken.delete(index);
  }

  /** A part in waiting (not yet complete). */
  get waiting(): number {
    let n = 0;
    for (const g of this.#groups.values()) n += g.parts.size;
    return n;
  }

  /** Takes one SMS read from SIM index `index`; answers the message when it is complete. */
  add(index: number, deliver: SmsDeliver, nowMs: number): ReadyMessage | null {
    this.#taken.add(index);
    const concat = deliver.userData.udh?.concat ?? null;
    if (!concat || concat.total <= 1) return { frame: frameOf(this.#scope, [deliver], null, false), indexes: [index] };
    const key = `${deliver.originator.address}|${concat.referenceBits}|${concat.reference}|${concat.total}`;
    let group = this.#groups.get(key);
    if (!group) this.#groups.set(key, (group = { total: concat.total, reference: concat.reference, firstAt: nowMs, parts: new Map() }));
    const existing = group.parts.get(concat.sequence);
    if (existing) existing.indexes.push(index);
    else group.parts.set(concat.sequence, { sequence: concat.sequence, deliver, indexes: [index] });
    if (group.parts.size < group.total) return null;
    this.#groups.delete(key);
    return readyOf(this.#scope, group, false);
  }

  /** Groups waiting longer than `timeoutMs`: stored as they are, marked incomplete. */
  expired(nowMs: number, timeoutMs: number): ReadyMessage[] {
    const out: ReadyMessage[] = [];
    for (const [key, group] of this.#groups) {
      if (nowMs - group.firstAt < timeoutMs) continue;
      this.#groups.delete(key);
      out.push(readyOf(this.#scope, group, true));
    }
    return out;
  }
}

function readyOf(scope: string, group: Group, incomplete: boolean): ReadyMessage {
  const parts = [...group.parts.values()].sort((a, b) => a.sequence - b.sequence);
  const frame = frameOf(scope, parts.map((p) => p.deliver), { reference: group.reference, total: group.total, received: parts.map((p) => p.sequence) }, incomplete);
  return { frame, indexes: parts.flatMap((p) => p.indexes) };
}

function frameOf(scope: string, parts: SmsDeliver[], concat: { reference: number; total: number; received: number[] } | null, incomplete: boolean): InboundFrame {
  const first = parts[0];
  const isText = parts.every((p) => p.userData.text !== null);
  const text = isText ? parts.map((p) => p.userData.text).join('') : null;
  const data = isText ? null : concatBytes(...parts.map((p) => p.userData.data ?? new TextEncoder().encode(p.userData.text ?? '')));
  const meta: Record<string, unknown> = {
    sender_type: first.originator.kind,
    smsc_timestamp: first.timestamp?.utc ?? null,
    smsc_local_time: first.timestamp?.local ?? null,
    encoding: first.coding.alphabet,
    parts: parts.length,
  };
  if (concat) {
    meta.concat_reference = concat.reference;
    meta.parts_total = concat.total;
  }
  if (incomplete && concat) {
    meta.incomplete = true;
    meta.missing_parts = Array.from({ length: concat.total }, (_, i) => i + 1).filter((n) => !concat.received.includes(n));
  }
  return {
    from: first.originator.address,
    // An SMS-DELIVER names no recipient: it is addressed to this SIM.
    to: TO_THIS_STATION,
    channel: null,
    kind: isText ? 'text' : 'data',
    text,
    payload: isText ? new TextEncoder().encode(text!) : data,
    meta,
    // The same SMS read again (a restart between storing and deleting it) has the same sender,
    // centre timestamp, reference and content: stored once. The content is part of the key:
    // the centre's timestamp has one-second resolution, and two texts from one sender in the
    // same second are two messages.
    dedupeKey: `sms:${scope}:${first.originator.address}:${first.timestamp?.utc ?? 'no-time'}:${concat ? `${concat.reference}/${concat.total}` : 'single'}:${incomplete ? 'incomplete' : 'whole'}:${contentHash(parts)}`,
  };
}

/** A short digest of what the parts carry (text or octets), for the dedupe key. */
function contentHash(parts: SmsDeliver[]): string {
  const hash = createHash('sha256');
  for (const p of parts) {
    if (p.userData.text !== null) hash.update(`t:${p.userData.text}`);
    else hash.update(p.userData.data ?? new Uint8Array(0));
  }
  return hash.digest('hex').slice(0, 16);
}
