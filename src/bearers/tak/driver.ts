import type { Bearer, BearerContext, InboundFrame, OutboundFrame, SendResult } from '../bearer.ts';
import { errorText } from '../device-error.ts';
import { DriverLifecycle, SupervisedBearer } from '../shared/links/driver-lifecycle.ts';
import type { Link } from '../shared/links/link.ts';
import { readEvent, type CotRead } from './cot.ts';
import { TakStreamDecoder } from './framing.ts';
import { chatEvent, positionEvent } from './outbound.ts';
import { LatestOnly } from './pacing.ts';
import { TakSettings } from './settings.ts';
import { readTlsMaterial, type CertificateFacts } from './tls-files.ts';
import { openTakLink } from './transport.ts';

// The TAK bearer (docs/tak.md): Cursor-on-Target to a TAK server over TCP or TLS, or to the TAK
// clients of a LAN by multicast. Out: a node's position becomes its marker (one uid per node,
// latest only per node, pacing.ts), a text becomes GeoChat. In: GeoChat from TAK users becomes
// a text message for the rules, their positions node reports (network tak). Its own events,
// echoed back by a server or the multicast group, are recognised by their uid and dropped.

type Phase = 'closed' | 'opening' | 'online' | 'backoff';

/** After the link comes up, positions gather this long so a backlog sends each node's newest. */
export const GATHER_MS = 1000;
/** A client certificate that expires within this is reported in the interface's state. */
export const CERT_WARN_MS = 7 * 86_400_000;
/** GeoChat event uids sent, remembered to tell their echo (besides the uid prefix). */
const SENT_REMEMBERED = 1024;

export function createTakBearer(ctx: BearerContext): TakBearer {
  return new TakBearer(ctx);
}

interface Counters {
  positions_sent: number;
  positions_waiting_replaced: number;
  positions_older_dropped: number;
  positions_without_fix: number;
  chats_sent: number;
  chats_heard: number;
  positions_heard: number;
  echoes_ignored: number;
  other_events: number;
  invalid_events: number;
  oversized_bytes: number;
}

export class TakBearer extends SupervisedBearer<Phase> implements Bearer {
  readonly kind = 'tak';
  readonly mtu: number;
  protected readonly lifecycle: DriverLifecycle<Phase>;
  readonly #ctx: BearerContext;
  readonly #s: TakSettings;
  readonly #pacing: LatestOnly;
  readonly #sent: string[] = [];
  #link: Link | null = null;
  #certificate: CertificateFacts | null = null;
  readonly #counters: Counters = {
    positions_sent: 0, positions_waiting_replaced: 0, positions_older_dropped: 0, positions_without_fix: 0, chats_sent: 0,
    chats_heard: 0, positions_heard: 0, echoes_ignored: 0, other_events: 0, invalid_events: 0, oversized_bytes: 0,
  };

  constructor(ctx: BearerContext) {
    super();
    this.#ctx = ctx;
    this.#s = TakSettings.parse(ctx.settings);
    this.mtu = this.#s.mtu;
    this.#pacing = new LatestOnly(ctx.clock, this.#s.min_interval_s * 1000, (xml) => this.#write(xml, () => this.#counters.positions_sent++));
    this.lifecycle = new DriverLifecycle<Phase>(ctx, {
      kind: 'tak',
      open: (device) => openTakLink(device, {
        clock: ctx.clock, connectTimeoutMs: 10_000, multicastInterface: this.#s.multicast_interface, multicastTtl: this.#s.multicast_ttl,
        tls: async () => {
          const { material, certificate } = await readTlsMaterial(this.#s);
          this.#certificate = certificate;
          return material;
        },
      }),
      session: async (link) => this.#session(link),
      backoff: { initialMs: 1000, maxMs: 60_000 },
      opening: 'connecting to the TAK end',
      online: { why: 'connected', state: (s) => this.#onlineState(s) },
      wentOnline: () => this.#pacing.gather(GATHER_MS),
      stopping: () => {
        this.#link = null;
        this.#pacing.stop();
      },
    });
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    const now = this.#ctx.clock.now();
    // Size first: a frame that can never fit is not kept for a retry while the link is down.
    if (frame.payload.length > this.mtu) return { ok: false, retryable: false, error: `ERR_TAK_TOO_LARGE: the message is ${frame.payload.length} bytes; this interface's mtu is ${this.mtu}` };
    if (frame.kind === 'position') {
      const out = positionEvent(frame, this.#s, now);
      if (!out) {
        this.#counters.positions_without_fix++;
        return { ok: false, retryable: false, error: 'ERR_TAK_NO_FIX: the position has no fix (no latitude and longitude, or 0,0); nothing is put on the map' };
      }
      if (!this.#link) return offline();
      const before = this.#pacing.superseded;
      const offer = this.#pacing.offer(out.uid, out.fixMs, out.xml);
      this.#counters.positions_waiting_replaced += this.#pacing.superseded - before;
      if (offer === 'older') this.#counters.positions_older_dropped++;
      return { ok: true, meta: { tak_uid: out.uid, tak: offer } };
    }
    if (frame.kind !== 'text') {
      return { ok: false, retryable: false, error: `ERR_TAK_KIND: a TAK interface carries positions and text, not ${frame.kind}` };
    }
    if (!this.#link) return offline();
    const chat = chatEvent(frame, this.#s, now);
    this.#remember(chat.uid);
    if (!this.#write(chat.xml, () => this.#counters.chats_sent++)) return offline();
    return { ok: true, meta: { tak_uid: chat.uid } };
  }

  stats(): Record<string, unknown> {
    return {
      ...this.#counters,
      positions_waiting: this.#pacing.waiting,
      link: this.#link?.description ?? null,
      certificate: this.#certificate,
    };
  }

  /** Writes one event; false when no link is up. A write that fails drops the link. */
  #write(xml: string, counted: () => void): boolean {
    const link = this.#link;
    if (!link) return false;
    counted();
    link.write(Buffer.from(xml, 'utf8')).catch((error: unknown) => this.lifecycle.fail(`writing to the TAK end failed: ${errorText(error)}`));
    return true;
  }

  async #session(link: Link): Promise<void> {
    const decoder = new TakStreamDecoder();
    link.onData((chunk) => {
      const { events, oversized } = decoder.push(chunk);
      this.#counters.oversized_bytes += oversized;
      for (const xml of events) this.#heard(readEvent(xml));
    });
    link.onClose(() => {
      if (this.#link === link) this.#link = null;
    });
    this.#link = link;
  }

  #onlineState(s: { connected: boolean; lastError: string | null; phase?: string }) {
    const c = this.#certificate;
    const left = c ? Date.parse(c.not_after) - this.#ctx.clock.now() : Infinity;
    if (left > CERT_WARN_MS) return s;
    const warning = left <= 0 ? `ERR_TAK_CERT_EXPIRED: the client certificate expired at ${c!.not_after}` : `ERR_TAK_CERT_EXPIRING: the client certificate expires at ${c!.not_after}, in ${Math.ceil(left / 86_400_000)} days; ask the TAK server for a new one`;
    this.#ctx.log.warn('tak_certificate_expiring', { not_after: c!.not_after, subject: c!.subject });
    return { ...s, lastError: warning, reason: 'config' as const };
  }

  #heard(r: CotRead): void {
    const own = (uid: string) => uid.startsWith(`${this.#s.uid_prefix}.`) || this.#sent.includes(uid);
    switch (r.type) {
      case 'invalid':
        this.#counters.invalid_events++;
        this.#ctx.log.debug('tak_event_invalid', { error: r.error });
        return;
      case 'other':
        this.#counters.other_events++;
        return;
      case 'position':
        if (own(r.uid)) {
          this.#counters.echoes_ignored++;
          return;
        }
        this.#counters.positions_heard++;
        if (!this.#s.positions_in) return;
        this.#ctx.events.nodes([{
          id: r.uid, network: 'tak', ...(r.callsign ? { long_name: r.callsign } : {}),
          position: { latitude: r.lat, longitude: r.lon, ...(r.hae !== null ? { altitude_m: r.hae } : {}), time: new Date(r.timeMs).toISOString() },
          last_heard_at: new Date(this.#ctx.clock.now()).toISOString(),
        }]);
        return;
      case 'chat': {
        if (own(r.senderUid) || own(r.uid)) {
          this.#counters.echoes_ignored++;
          return;
        }
        this.#counters.chats_heard++;
        if (this.#s.positions_in) this.#ctx.events.nodes([{ id: r.senderUid, network: 'tak', long_name: r.senderCallsign, last_heard_at: new Date(this.#ctx.clock.now()).toISOString() }]);
        const frame: InboundFrame = {
          from: r.senderUid, to: r.roomId, channel: null, kind: 'text', text: r.text, payload: new TextEncoder().encode(r.text),
          meta: { tak_callsign: r.senderCallsign, tak_room: r.roomName, tak_event_uid: r.uid },
          // A server may send an event again after a reconnect; its uid names the message.
          dedupeKey: `tak:${r.uid}`,
        };
        void this.#ctx.events.receive(frame, { watchOnly: true });
        return;
      }
    }
  }

  #remember(uid: string): void {
    this.#sent.push(uid);
    if (this.#sent.length > SENT_REMEMBERED) this.#sent.shift();
  }
}

function offline(): SendResult {
  return { ok: false, retryable: true, reason: 'offline', error: 'ERR_TAK_OFFLINE: the TAK end is not connected' };
}
