import type { DropListener } from './cap.ts';

// The rows published and not yet acknowledged by the hub, and how long the hub is given to
// acknowledge them. The drain adds to them, acks and the cap take away from them, and a
// reconnect or an ack timeout sends them all again, oldest first.
//
// The ack timeout starts at the publisher's ackTimeoutMs and doubles while nothing is
// acknowledged, up to 5 minutes; the same timeout paces asking a silent hub again for its
// first answer (session.ts).

const MAX_ACK_TIMEOUT_MS = 300_000;
/** A gap the hub asks for is sent again only if its last send is older than this (or than
 *  half the ack timeout, if shorter): it may still be on its way. */
const MIN_RESEND_MS = 2000;

export class InFlight implements DropListener {
  /** Local seq -> when it was last published (clock ms). */
  readonly #sent = new Map<number, number>();
  /** Local seqs to publish again before anything new. */
  readonly #resend = new Set<number>();
  /** Every row at or below it has been published this connection (or was acknowledged). */
  #cursor = 0;
  /** The highest local seq published this boot: acks are applied up to it, never past. */
  #highestPublished = 0;
  #lastProgress = 0;
  readonly #baseTimeout: number;
  #timeout: number;

  constructor(baseTimeoutMs: number) {
    this.#baseTimeout = baseTimeoutMs;
    this.#timeout = baseTimeoutMs;
  }

  /** Published and not acknowledged. */
  get count(): number {
    return this.#sent.size;
  }

  /** Waiting to be published again. */
  get resends(): number {
    return this.#resend.size;
  }

  get cursor(): number {
    return this.#cursor;
  }

  get highestPublished(): number {
    return this.#highestPublished;
  }

  /** The current ack timeout. */
  get timeout(): number {
    return this.#timeout;
  }

  /** A new connection: everything not acknowledged is sent again, oldest first. */
  reconnected(now: number): void {
    this.#cursor = 0;
    this.#sent.clear();
    this.#resend.clear();
    this.#lastProgress = now;
  }

  /** The outbox cap dropped the row: it is neither waited for nor sent again. */
  dropped(seq: number): void {
    this.#sent.delete(seq);
    this.#resend.delete(seq);
  }

  /** Forgets every row the hub has acknowledged. */
  acknowledged(acked: { has(seq: number): boolean }): void {
    for (const seq of this.#sent.keys()) if (acked.has(seq)) this.#sent.delete(seq);
    for (const seq of this.#resend) if (acked.has(seq)) this.#resend.delete(seq);
  }

  /** The hub acknowledged something: the timeout starts again from its first value. */
  progressed(now: number): void {
    this.#lastProgress = now;
    this.#timeout = this.#baseTimeout;
  }

  resetTimeout(): void {
    this.#timeout = this.#baseTimeout;
  }

  /** Doubles the timeout, up to 5 minutes. */
  lengthenTimeout(): void {
    this.#timeout = Math.min(this.#timeout * 2, MAX_ACK_TIMEOUT_MS);
  }

  /** Rows are waiting and nothing was acknowledged within the timeout. */
  overdue(now: number): boolean {
    return this.#sent.size > 0 && now - this.#lastProgress > this.#timeout;
  }

  /** After an ack timeout: the broker may have dropped them (its queue limit, a restart without
   *  persistence), so everything unacknowledged goes again from the oldest, with a longer
   *  timeout. */
  resendAll(now: number): void {
    this.lengthenTimeout();
    this.#lastProgress = now;
    this.#cursor = 0;
    this.#sent.clear();
  }

  /** A gap the hub asks for, held and not acknowledged: sent again unless it went out just now
   *  or has not gone out yet this connection. */
  gapAsked(seq: number, now: number): void {
    const at = this.#sent.get(seq);
    if (at === undefined ? seq <= this.#cursor : now - at > Math.min(MIN_RESEND_MS, this.#baseTimeout / 2)) {
      this.#sent.delete(seq);
      this.#resend.add(seq);
    }
  }

  /** Up to `room` rows to send again, oldest first, taken off the list. */
  takeResends(room: number): number[] {
    const wanted = [...this.#resend].sort((a, b) => a - b).slice(0, room);
    for (const seq of wanted) this.#resend.delete(seq);
    return wanted;
  }

  /** Rows up to seq are all acknowledged already: the next new rows come after it. */
  passTo(seq: number): void {
    this.#cursor = seq;
  }

  /** A publish is about to go out: the ack timeout runs from the oldest unacknowledged
   *  publish, so after a quiet moment it starts now, not at the last progress long ago. */
  publishing(now: number): void {
    if (this.#sent.size === 0) this.#lastProgress = now;
  }

  published(seq: number, at: number): void {
    this.#sent.set(seq, at);
    if (seq > this.#cursor) this.#cursor = seq;
    if (seq > this.#highestPublished) this.#highestPublished = seq;
  }
}
