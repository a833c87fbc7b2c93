import { LinkEvents } from './link-events.ts';
import type { Link } from './link.ts';

// One open link handed to consumers in turn: bytes heard while nobody holds it are dropped
// (the ESP32 boot chatter during the reset wait), then a probe gets a view, then the driver
// gets its own. A view that was handed on hears nothing more, so a probe's listeners never
// see the driver's traffic (Link has no "remove listener"; this is how we do without one).

export class SharedLink {
  readonly #inner: Link;
  readonly #report: (error: unknown) => void;
  #current: LinkEvents | null = null;
  readonly #views: LinkEvents[] = [];
  #closedReason: string | null = null;

  constructor(inner: Link, report: (error: unknown) => void = () => {}) {
    this.#inner = inner;
    this.#report = report;
    inner.onData((chunk) => this.#current?.emitData(chunk));
    inner.onClose((reason) => {
      this.#closedReason = reason;
      for (const view of this.#views) view.emitClose(reason);
    });
  }

  /** Why the underlying link closed; null while it is open. */
  get closedReason(): string | null {
    return this.#closedReason;
  }

  /** Drops what arrives until the next view is taken. */
  mute(): void {
    this.#current = null;
  }

  /**
   * A Link that hears what arrives from now until the next view() or mute(). Its close()
   * closes the underlying link unless `closeInner` is false (a probe must not end the link).
   */
  view(closeInner = true): Link {
    const events = new LinkEvents(this.#report);
    this.#views.push(events);
    this.#current = events;
    if (this.#closedReason !== null) events.emitClose(this.#closedReason);
    const inner = this.#inner;
    return {
      kind: inner.kind,
      description: inner.description,
      write: (data) => (events.closed ? Promise.reject(events.closedError(inner.description)) : inner.write(data)),
      onData: (listener) => events.onData(listener),
      onClose: (listener) => events.onClose(listener),
      close: async () => {
        if (closeInner) await inner.close();
        else {
          if (this.#current === events) this.#current = null;
          events.emitClose('released by its holder');
        }
      },
    };
  }
}
