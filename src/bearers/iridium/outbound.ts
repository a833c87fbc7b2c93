import type { OutboundFrame } from '../bearer.ts';
import { concat } from '../shared/codec/bytes.ts';
import { rockblockPrefix, SBD_MAX_MO_BYTES } from './sbd.ts';

// An MO message as the modem is given it (docs/iridium.md, "Sending"). Pure.

/** The MO bytes for `to`: `gateway` sends the payload as it is (the provider delivers it
 *  where its account says); `RB` and a serial sends it to that RockBLOCK (iridium-sbd.md 3.6). */
export function moPayload(frame: Pick<OutboundFrame, 'to' | 'payload'>): { ok: true; payload: Uint8Array } | { ok: false; error: string } {
  const to = frame.to.trim();
  let payload = frame.payload;
  if (to !== 'gateway') {
    const prefix = rockblockPrefix(to);
    if (!prefix) return { ok: false, error: `ERR_IRIDIUM_ADDRESS: ${JSON.stringify(frame.to)} is no Iridium destination: use "gateway" (the provider delivers it) or "RB" and a RockBLOCK serial number, e.g. RB0001234` };
    payload = concat(prefix, frame.payload);
  }
  if (frame.payload.length === 0) return { ok: false, error: 'ERR_IRIDIUM_EMPTY: an SBD message carries 1 to 340 bytes; this one is empty' };
  if (payload.length > SBD_MAX_MO_BYTES) {
    const room = SBD_MAX_MO_BYTES - (payload.length - frame.payload.length);
    return { ok: false, error: `ERR_IRIDIUM_TOO_LONG: ${frame.payload.length} bytes, but one SBD message carries at most ${room} (add a split transform with max_bytes ${room} to send it in parts)` };
  }
  return { ok: true, payload };
}
