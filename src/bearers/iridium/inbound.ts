import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { type InboundFrame, TO_THIS_STATION } from '../bearer.ts';
import { splitRockblockSender } from './sbd.ts';

// An MT message as the bridge stores it (docs/iridium.md, "Receiving"). Pure.
//
// - `from`: `gateway` (the provider's side: its web API, e-mail or the bridge's hub), or the
//   sending RockBLOCK when the payload starts with `RB` and its 7-digit serial (that prefix is
//   taken off). A reply to `gateway` goes back as an MO message through the same interface.
// - kind `text` when the body is valid, non-empty UTF-8; else `data` with the bytes.
// - dedupeKey: modem, MTMSN and a digest of the bytes. An MT message read again (the bridge
//   restarted between storing it and clearing the modem's MT buffer) is stored once; MTMSN
//   wraps at 65535, far beyond what a day of satellite traffic reaches, and the digest keeps
//   a wrapped number with other content apart.

export function mtFrame(payload: Uint8Array, facts: { imei: string | null; mtmsn: number | null }): InboundFrame {
  const rockblock = splitRockblockSender(payload);
  const body = rockblock ? rockblock.body : payload;
  const text = body.length > 0 && isUtf8(body) ? new TextDecoder().decode(body) : null;
  const digest = createHash('sha256').update(payload).digest('hex').slice(0, 16);
  return {
    from: rockblock ? rockblock.from : 'gateway',
    // An MT message is addressed to this modem.
    to: TO_THIS_STATION,
    channel: null,
    kind: text !== null ? 'text' : 'data',
    text,
    payload: body.slice(),
    meta: { mtmsn: facts.mtmsn, bytes: payload.length, ...(rockblock ? { rockblock_sender: rockblock.from } : {}) },
    dedupeKey: `iridium:${facts.imei ?? 'unknown-imei'}:${facts.mtmsn ?? 'unknown-mtmsn'}:${digest}`,
  };
}
