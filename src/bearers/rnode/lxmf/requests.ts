import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import { toHex } from '../../shared/codec/bytes.ts';
import { CONTEXT } from '../reticulum/constants.ts';
import { LINK_MDU } from '../reticulum/link.ts';
import { decodeLinkResponse, encodeLinkRequest, requestIdOfPacket } from '../reticulum/request.ts';
import type { LinkSession, LinkTable } from './links.ts';

// Our requests on links (RNS/Link.py request, RequestReceipt): each waits for its answer, which
// comes as one RESPONSE packet or as a response resource (Transfers asks expects() before taking
// one). Requests larger than one link packet are not sent: ours are small by construction.

export type RequestResult = { ok: true; response: unknown } | { ok: false; error: string };

interface Pending {
  link: LinkSession;
  resolve(r: RequestResult): void;
  timer: TimerHandle;
  onClose(reason: string): void;
}

export class LinkRequests {
  readonly #clock: Clock;
  readonly #links: LinkTable;
  readonly #pending = new Map<string, Pending>();

  constructor(clock: Clock, links: LinkTable) {
    this.#clock = clock;
    this.#links = links;
  }

  /** Sends a request (`packedData` is the msgpack of its data) and resolves with the decoded
   *  response, or why none came within timeoutMs. */
  async request(link: LinkSession, path: string, packedData: Uint8Array, timeoutMs: number): Promise<RequestResult> {
    const plaintext = encodeLinkRequest(path, packedData, this.#clock.now() / 1000);
    if (plaintext.length > LINK_MDU) return { ok: false, error: `the request is ${plaintext.length} bytes, more than one link packet (${LINK_MDU})` };
    const sent = await this.#links.send(link, CONTEXT.REQUEST, plaintext);
    if (!sent.ok) return { ok: false, error: sent.error };
    const key = toHex(requestIdOfPacket(sent.hash));
    return new Promise((resolve) => {
      const settle = (r: RequestResult) => {
        const p = this.#pending.get(key);
        if (!p) return;
        this.#pending.delete(key);
        this.#clock.clearTimeout(p.timer);
        link.closed.delete(p.onClose);
        resolve(r);
      };
      const p: Pending = {
        link, resolve: settle,
        timer: this.#clock.setTimeout(() => settle({ ok: false, error: `no response to ${path} within ${Math.round(timeoutMs / 1000)} s` }), timeoutMs),
        onClose: (reason) => settle({ ok: false, error: `the link closed (${reason})` }),
      };
      link.closed.add(p.onClose);
      this.#pending.set(key, p);
    });
  }

  /** Whether a response resource with this request id is awaited on the link. */
  expects(link: LinkSession, requestId: Uint8Array): boolean {
    return this.#pending.get(toHex(requestId))?.link === link;
  }

  /** A response: a RESPONSE packet's plaintext or an assembled response resource. */
  onResponse(link: LinkSession, plaintext: Uint8Array): void {
    const r = decodeLinkResponse(plaintext);
    if (!r.ok) return;
    const p = this.#pending.get(toHex(r.response.requestId));
    if (p && p.link === link) p.resolve({ ok: true, response: r.response.response });
  }
}
