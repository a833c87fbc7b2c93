import { formatTnc2, type Tnc2Packet } from './codec/ax25.ts';
import { decodeInfo } from './codec/info.ts';

// Who was heard on RF, and the iGate rules (docs/protocols/aprs.md 4; docs/aprs.md, "iGate"):
// what heard on RF goes to APRS-IS, and which APRS-IS messages may go to RF. Pure but for the
// list it keeps; times are the bridge clock's, passed in.

/** How long a station heard on RF counts as "recently heard" for gating to RF. */
export const HEARD_WINDOW_MS = 30 * 60_000;
/** Stations remembered at most (the oldest are forgotten first). */
const HEARD_MAX = 2000;

/** Path words that keep a packet off APRS-IS (or mark it as from the internet). */
const NO_GATE = new Set(['TCPIP', 'TCPXX', 'NOGATE', 'RFONLY']);
const FROM_INTERNET = new Set(['TCPIP', 'TCPXX']);

const bare = (word: string) => word.replace(/\*$/, '').toUpperCase();

export class HeardList {
  readonly #heard = new Map<string, { atMs: number; direct: boolean }>();

  /** A packet heard on RF from `source`; `direct`: no digipeater had repeated it. */
  hear(source: string, direct: boolean, atMs: number): void {
    const key = source.toUpperCase();
    const before = this.#heard.get(key);
    this.#heard.delete(key);
    // A station heard directly stays "direct" for the window even when a digipeated copy follows.
    const keepDirect = before !== undefined && before.direct && atMs - before.atMs < HEARD_WINDOW_MS;
    this.#heard.set(key, { atMs, direct: direct || keepDirect });
    if (this.#heard.size > HEARD_MAX) this.#heard.delete(this.#heard.keys().next().value!);
  }

  /** Heard on RF in the last 30 minutes (directly, when `direct`). */
  recently(station: string, nowMs: number, direct = false): boolean {
    const h = this.#heard.get(station.toUpperCase());
    return h !== undefined && nowMs - h.atMs < HEARD_WINDOW_MS && nowMs >= h.atMs - 60_000 && (!direct || h.direct);
  }

  get size(): number {
    return this.#heard.size;
  }
}

/** The APRS-IS line an iGate sends for a packet heard on RF, or why not. */
export function gateToIs(packet: Tnc2Packet, igate: string): { line: string } | { skip: string } {
  if (packet.source.toUpperCase() === igate.toUpperCase()) return { skip: 'our own transmission' };
  if (packet.path.some((p) => NO_GATE.has(bare(p)))) return { skip: 'its path says not to gate it' };
  if (packet.info.startsWith('?')) return { skip: 'a query' };
  if (packet.info.startsWith('}')) {
    const inner = decodeInfo(packet.destination, packet.info);
    if (inner.type !== 'third-party') return { skip: 'a third-party packet that does not parse' };
    if (inner.packet.path.some((p) => FROM_INTERNET.has(bare(p)) || NO_GATE.has(bare(p)))) return { skip: 'a third-party packet from the internet' };
    return gateToIs(inner.packet, igate);
  }
  if (packet.info.length === 0) return { skip: 'empty' };
  return { line: formatTnc2({ ...packet, path: [...packet.path, 'qAR', igate] }) };
}

/** Whether an APRS-IS packet may be sent on RF by this iGate, and what to send (the info
 *  field of a third-party frame), or why not. Only messages to stations heard directly in
 *  the last 30 minutes, from senders not heard on RF themselves. */
export function gateToRf(packet: Tnc2Packet, igate: string, heard: HeardList, nowMs: number): { info: string } | { skip: string } {
  const info = decodeInfo(packet.destination, packet.info);
  if (info.type !== 'message' && info.type !== 'ack' && info.type !== 'rej') return { skip: 'not a message (only messages are gated to RF)' };
  if (info.addressee.toUpperCase() === igate.toUpperCase()) return { skip: 'addressed to this station' };
  if (/^(BLN|NWS|SKY|CWA|BOM)/.test(info.addressee)) return { skip: 'a bulletin' };
  if (packet.path.some((p) => bare(p) === 'NOGATE' || bare(p) === 'RFONLY')) return { skip: 'its path says not to gate it' };
  if (!heard.recently(info.addressee, nowMs, true)) return { skip: `${info.addressee} was not heard directly on RF in the last 30 minutes` };
  if (heard.recently(packet.source, nowMs)) return { skip: `${packet.source} is heard on RF itself` };
  return { info: `}${formatTnc2({ source: packet.source, destination: packet.destination, path: ['TCPIP', `${igate}*`], info: packet.info })}` };
}
