// A typed event stream: subscribers are called synchronously, in subscription order, where the
// event is emitted. That is the point: a subscriber that writes to the database (the uplink
// outbox) writes inside the transaction that emitted the event, so both happen or neither.
// A subscriber that throws makes emit() throw (and such a transaction roll back).

export class EventStream<E> {
  readonly #listeners = new Set<(event: E) => void>();

  /** Calls `listener` for every event from now on; returns the unsubscribe. */
  subscribe(listener: (event: E) => void): () => void {
    // A wrapper, so the same function subscribed twice is two subscriptions.
    const entry = (event: E) => listener(event);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  emit(event: E): void {
    for (const listener of [...this.#listeners]) listener(event);
  }
}
