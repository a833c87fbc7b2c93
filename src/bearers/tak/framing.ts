import { XML_LIMITS } from './xml.ts';

// TAK's streaming framing (docs/protocols/tak.md 3): over TCP and TLS a client and a server
// write CoT events back to back as XML, each one `<event ...>...</event>`, optionally preceded
// by an XML declaration, with nothing between them but white space. No length prefix: an
// event ends at its `</event>`. A UDP datagram carries one event (or, rarely, a few back to
// back), read by the same decoder. Pure (docs/style.md habit 1).

const END = Buffer.from('</event>', 'latin1');
const START = Buffer.from('<event', 'latin1');
/** Largest event the decoder keeps whole (bytes): XML_LIMITS.chars, UTF-8 at up to 4 bytes
 *  a character would be more; an event past this many bytes is dropped and counted. */
export const MAX_EVENT_BYTES = XML_LIMITS.chars;

export interface TakPush {
  /** Whole events, as text (UTF-8 decoded; bad bytes become U+FFFD). */
  events: string[];
  /** Bytes dropped because no event in them ended within MAX_EVENT_BYTES. */
  oversized: number;
}

export class TakStreamDecoder {
  #buffer: Buffer = Buffer.alloc(0);
  /** Where to look for `</event>` next (the part before was searched already). */
  #searched = 0;

  push(chunk: Uint8Array): TakPush {
    const out: TakPush = { events: [], oversized: 0 };
    this.#buffer = this.#buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const end = this.#buffer.indexOf(END, Math.max(0, this.#searched - END.length + 1));
      if (end < 0) {
        this.#searched = this.#buffer.length;
        if (this.#buffer.length > MAX_EVENT_BYTES) this.#resync(out);
        return out;
      }
      const stop = end + END.length;
      if (stop > MAX_EVENT_BYTES) {
        // An event that ended past the bound: dropped whole, the stream goes on after it.
        out.oversized += stop;
      } else {
        const text = this.#buffer.toString('utf8', 0, stop).trim();
        if (text !== '') out.events.push(text);
      }
      this.#buffer = this.#buffer.subarray(stop);
      this.#searched = 0;
    }
  }

  /** Bytes held while waiting for an event's end. */
  get pending(): number {
    return this.#buffer.length;
  }

  /** Too much without an end: drop up to the last `<event` start (which may be a fresh event),
   *  or all of it. */
  #resync(out: TakPush): void {
    const start = this.#buffer.lastIndexOf(START);
    const keep = start > 0 && this.#buffer.length - start <= MAX_EVENT_BYTES ? start : this.#buffer.length;
    out.oversized += keep;
    this.#buffer = Buffer.from(this.#buffer.subarray(keep));
    this.#searched = 0;
  }
}
