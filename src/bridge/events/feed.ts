import type { DatabaseSync } from 'node:sqlite';
import { afterCommit } from '../../db/transaction.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { ConfigValues } from '../config/sections.ts';
import type { EventLogStore, LoggedEvent } from './store.ts';

// The bridge's event feed (docs/events.md): what GET /api/events streams. Each event gets the
// next id and, while bridge.events.log_max_events allows, a row in the event log, written in
// the transaction that makes the event true (a message stored, a delivery's state), so the log
// and the data agree after a crash. Live followers hear an event once its transaction has
// committed: never an event that was rolled back.

export type EventType = 'message' | 'delivery' | 'interface' | 'node' | 'config';
export const EVENT_TYPES: readonly EventType[] = ['message', 'delivery', 'interface', 'node', 'config'];

export type EventLimits = ConfigValues['bridge']['events'];

/** Appends between two prunes of the log. */
const PRUNE_EVERY = 256;

export class EventFeed {
  readonly #db: DatabaseSync;
  readonly #store: EventLogStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limits: () => EventLimits;
  readonly #followers = new Set<(event: LoggedEvent) => void>();
  #last: number;
  #sincePrune = 0;
  #streams = 0;
  readonly #closers = new Set<(reason: string) => void>();

  constructor(deps: { db: DatabaseSync; store: EventLogStore; clock: Clock; log: Logger; limits: () => EventLimits }) {
    this.#db = deps.db;
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#limits = deps.limits;
    this.#last = deps.store.lastId();
  }

  get limits(): EventLimits {
    return this.#limits();
  }

  /** The id of the latest event. */
  get lastId(): number {
    return this.#last;
  }

  /** The oldest event a client may still be given again; null when the log keeps none. */
  firstKept(): number | null {
    return this.#limits().log_max_events === 0 ? null : this.#store.firstId();
  }

  /** Up to `limit` logged events after `id`. */
  after(id: number, limit: number): LoggedEvent[] {
    return this.#store.after(id, limit);
  }

  publish(type: EventType, body: Record<string, unknown>, scope: { interfaceId?: string | null; kind?: string | null } = {}): void {
    const id = ++this.#last;
    const at = new Date(this.#clock.now()).toISOString();
    const event: LoggedEvent = { id, at, type, interface_id: scope.interfaceId ?? null, kind: scope.kind ?? null, data: JSON.stringify({ id, type, at, ...body }) };
    const limits = this.#limits();
    if (limits.log_max_events > 0) {
      try {
        this.#store.append(event);
        if (++this.#sincePrune >= PRUNE_EVERY) this.prune();
      } catch (error) {
        // The event is still streamed live; a client that reconnects is told of the gap.
        this.#log.warn('event_log_write_failed', { id, type, error: (error as Error).message });
      }
    }
    afterCommit(this.#db, () => {
      for (const follower of this.#followers) follower(event);
    });
  }

  /** Cuts the log to its bounds (also after the bounds were lowered). */
  prune(): void {
    this.#sincePrune = 0;
    const limits = this.#limits();
    const cutoff = new Date(this.#clock.now() - limits.log_max_hours * 3_600_000).toISOString();
    this.#store.prune(limits.log_max_events, cutoff);
  }

  /** Calls `listener` for every committed event from now on; returns the unsubscribe. */
  follow(listener: (event: LoggedEvent) => void): () => void {
    const entry = (event: LoggedEvent) => listener(event);
    this.#followers.add(entry);
    return () => this.#followers.delete(entry);
  }

  /** Takes a stream slot (null when bridge.events.max_streams are open); `close` ends the
   *  stream when the bridge stops. Give the slot back with its release(). */
  openStream(close: (reason: string) => void): { release(): void } | null {
    if (this.#streams >= this.#limits().max_streams) return null;
    this.#streams++;
    this.#closers.add(close);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#streams--;
        this.#closers.delete(close);
      },
    };
  }

  /** Ends every stream, telling each client why (the bridge stops). */
  closeStreams(reason: string): void {
    for (const close of [...this.#closers]) close(reason);
  }

  get streams(): number {
    return this.#streams;
  }
}
