import type { SendResult } from '../bearer.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import { formatNodeId, ROUTING_ERROR } from './codec/messages.ts';
import { isRetryableRoutingError, routingErrorName } from './outbound.ts';

// Acknowledgements and the device's queue (docs/meshtastic.md, "What delivered means").
// A packet sent with want_ack is answered by a ROUTING_APP packet whose Data.request_id is its
// id: error NONE is delivered, anything else fails the attempt with the error's name. The
// device's QueueStatus says how many packets it can still take; we never write more.

interface Pending {
  resolve(result: SendResult): void;
  timer: TimerHandle;
  broadcast: boolean;
  /** The destination of a direct message: only its NONE means delivered. */
  to: number | null;
}

export class AckBook {
  readonly #clock: Clock;
  readonly #pending = new Map<number, Pending>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Waits for the answer to packet `id`; no answer within `timeoutMs` is a retryable failure. */
  wait(id: number, broadcast: boolean, timeoutMs: number, to: number | null = null): Promise<SendResult> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#pending.delete(id);
        resolve({ ok: false, retryable: true, error: `ERR_MESHTASTIC_NO_ACK: no acknowledgement within ${Math.round(timeoutMs / 1000)} s` });
      }, timeoutMs);
      this.#pending.set(id, { resolve, timer, broadcast, to });
    });
  }

  /** A routing answer arrived; true when it settled a packet we wait for. */
  settle(requestId: number, from: number, errorReason: number): boolean {
    const p = this.#pending.get(requestId);
    if (!p) return false;
    // A NONE from another node for a direct message is a relay heard repeating it (the
    // firmware's implicit ack): progress, not delivery. Keep waiting for the destination.
    if (errorReason === ROUTING_ERROR.NONE && !p.broadcast && p.to !== null && from !== p.to) return true;
    this.#pending.delete(requestId);
    this.#clock.clearTimeout(p.timer);
    if (errorReason === ROUTING_ERROR.NONE) {
      // A broadcast's "ack" is the own node hearing a neighbour repeat it: nobody read it.
      p.resolve({ ok: true, meta: p.broadcast ? { ack: 'rebroadcast heard' } : { ack: 'acknowledged', acked_by: formatNodeId(from) } });
    } else {
      const name = routingErrorName(errorReason);
      p.resolve({ ok: false, retryable: isRetryableRoutingError(errorReason), error: `ERR_MESHTASTIC_${name}: the mesh answered ${name}` });
    }
    return true;
  }

  /** The device refused the packet (a QueueStatus with a non-zero res naming it): it will
   *  never be acknowledged, so the wait ends now. Retryable: the device's state (transmit off,
   *  region unset) can change. */
  refuse(id: number, res: number): boolean {
    const p = this.#pending.get(id);
    if (!p) return false;
    this.#pending.delete(id);
    this.#clock.clearTimeout(p.timer);
    p.resolve({ ok: false, retryable: true, error: `ERR_MESHTASTIC_REFUSED: the device refused the packet (queue status ${res}; is its region set and transmit on?)` });
    return true;
  }

  /** Stops waiting for a packet that was never written. */
  cancel(id: number): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    this.#clock.clearTimeout(p.timer);
  }

  /** The link went away: every wait ends with this retryable failure. */
  failAll(error: string): void {
    for (const [id, p] of this.#pending) {
      this.#clock.clearTimeout(p.timer);
      this.#pending.delete(id);
      p.resolve({ ok: false, retryable: true, error });
    }
  }
}

/** Room in the device's transmit queue, as its last QueueStatus said minus what we wrote since. */
export class DeviceQueue {
  #free: number | null = null;
  #max: number | null = null;
  readonly #waiters: Array<(granted: boolean) => void> = [];

  get free(): number | null {
    return this.#free;
  }
  get max(): number | null {
    return this.#max;
  }

  status(free: number, max: number): void {
    this.#free = free;
    this.#max = max;
    // Each waiter let through takes its slot at once, so no more go than there is room for.
    while (this.#free > 0 && this.#waiters.length > 0) {
      this.#free--;
      this.#waiters.shift()!(true);
    }
  }

  /** Resolves when a packet may be written, with its slot taken (at once while the device
   *  has not said how much room it has). */
  room(clock: Clock, timeoutMs: number): Promise<boolean> {
    if (this.#free === null) return Promise.resolve(true);
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter = (granted: boolean) => {
        clock.clearTimeout(timer);
        resolve(granted);
      };
      // No room in time: the caller gives up without having written anything.
      const timer = clock.setTimeout(() => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        resolve(false);
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** A granted slot that was not used (the link went away before the write). */
  giveBack(): void {
    if (this.#free !== null) this.#free++;
  }

  /** A new session: the device will say again. Waiters go on (they are failed by timeouts). */
  reset(): void {
    this.#free = null;
    this.#max = null;
    while (this.#waiters.length > 0) this.#waiters.shift()!(true);
  }
}
