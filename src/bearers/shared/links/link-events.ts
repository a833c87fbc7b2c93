import { DeviceError } from '../../device-error.ts';

// The listener bookkeeping every Link implementation shares (serial, TCP, BLE), so each of
// them only maps its transport's events: data goes to every data listener; close is reported
// exactly once, to listeners registered before and after it; bytes that arrive before the
// first data listener is added wait (up to a cap) instead of being lost, because a transport
// keeps reading from the moment it opens (that is how it notices an unplug); a listener that
// throws is contained (a driver bug must not take the transport down with it, and never
// crashes the process from inside a stream callback).

// Far more than any device says unprompted between open and a driver attaching.
const MAX_PENDING_BYTES = 64 * 1024;

export class LinkEvents {
  #data: Array<(chunk: Uint8Array) => void> = [];
  #close: Array<(reason: string) => void> = [];
  #closedReason: string | null = null;
  #pending: Uint8Array[] | null = [];
  #pendingBytes = 0;
  readonly #report: (error: unknown) => void;

  /** @param report where a listener's exception goes (a logger); never rethrown. */
  constructor(report: (error: unknown) => void = () => {}) {
    this.#report = report;
  }

  get closed(): boolean {
    return this.#closedReason !== null;
  }

  get closedReason(): string | null {
    return this.#closedReason;
  }

  onData(listener: (chunk: Uint8Array) => void): void {
    this.#data.push(listener);
    const pending = this.#pending;
    this.#pending = null;
    for (const chunk of pending ?? []) this.#call(listener, chunk);
  }

  onClose(listener: (reason: string) => void): void {
    if (this.#closedReason !== null) {
      const reason = this.#closedReason;
      queueMicrotask(() => this.#call(listener, reason));
      return;
    }
    this.#close.push(listener);
  }

  emitData(chunk: Uint8Array): void {
    if (this.#closedReason !== null) return;
    if (this.#pending) {
      // Nobody listens yet: keep the newest bytes up to the cap (the oldest are boot noise).
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      while (this.#pendingBytes > MAX_PENDING_BYTES && this.#pending.length > 1) this.#pendingBytes -= this.#pending.shift()!.length;
      return;
    }
    for (const listener of this.#data) this.#call(listener, chunk);
  }

  /** Reports the close once; later calls are ignored (a transport often says it twice). */
  emitClose(reason: string): void {
    if (this.#closedReason !== null) return;
    this.#closedReason = reason;
    const listeners = this.#close;
    this.#close = [];
    this.#data = [];
    this.#pending = null;
    for (const listener of listeners) this.#call(listener, reason);
  }

  /** The error a write on a closed link rejects with. */
  closedError(description: string): DeviceError {
    return new DeviceError('ERR_LINK_CLOSED', `${description} is closed (${this.#closedReason ?? 'closing'})`, { retryable: true });
  }

  #call<T>(listener: (value: T) => void, value: T): void {
    try {
      listener(value);
    } catch (error) {
      this.#report(error);
    }
  }
}

/** The listener half of a Link, kept by a LinkEvents: the same for every transport. A link
 *  reports its transport's bytes and close through `events`. */
export abstract class EventLink {
  protected readonly events: LinkEvents;

  constructor(report?: (error: unknown) => void) {
    this.events = new LinkEvents(report);
  }

  onData(listener: (chunk: Uint8Array) => void): void {
    this.events.onData(listener);
  }

  onClose(listener: (reason: string) => void): void {
    this.events.onClose(listener);
  }
}

/** A transport's callback-style write as a promise: its error rejects as ERR_LINK_WRITE,
 *  retryable (the link is dropped and opened again). */
export function writeDone(description: string, write: (done: (error?: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    write((error) => (error ? reject(new DeviceError('ERR_LINK_WRITE', `writing to ${description} failed: ${error.message}`, { retryable: true })) : resolve()));
  });
}
