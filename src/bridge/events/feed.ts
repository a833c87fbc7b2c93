import type { DatabaseSync } from 'node:sqlite';
import { afterCommit } from '../../db/transaction.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { ConfigValues } from '../config/sections.ts';
import type { EventLogStore, LoggedEvent } from './store.ts';

// The bridge's event feed (docs/events.md): what GET /api/events streams. Each event gets the
// next id when it is published (inside the transaction that makes it true) and, once that
// transaction has committed, joins the recent events kept in memory for clients that reconnect
// and goes to the live followers: never an event that was rolled back. The recent events are
// bounded (bridge.events) and saved only when the bridge stops (EventLogStore), so an event
// costs the SD card nothing; ids are reserved in blocks, so a crash never makes an id mean two
// events. What a crash lost is a known range of ids, answered with a `gap`.

export type EventType = 'message' | 'delivery' | 'interface' | 'node' | 'config';
export const EVENT_TYPES: readonly EventType[] = ['message', 'delivery', 'interface', 'node', 'config'];

export type EventLimits = ConfigValues['bridge']['events'];

/** Ids reserved per write of event_ids: one small write per this many events. */
export const ID_BLOCK = 10_000;

export class EventFeed {
  readonly #db: DatabaseSync;
  readonly #store: EventLogStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #limits: () => EventLimits;
  readonly #followers = new Set<(event: LoggedEvent) => void>();
  readonly #closers = new Set<(reason: string) => void>();
  /** Committed events, oldest first: those kept are #recent[#head..], within the limits.
   *  Events fall off the front by moving #head, so keeping one costs no copy of the rest. */
  #recent: LoggedEvent[];
  #head = 0;
  #recentBytes = 0;
  /** When the kept events were last cut by age (#keep looks at most once a second: the bound
   *  is in hours). */
  #ageCutAt = -Infinity;
  #last: number;
  #committed: number;
  #reservedTo: number;
  /** Ids a crashed run may have given out and nobody kept: [from, to], or null. */
  readonly lost: { from: number; to: number } | null;
  #streams = 0;

  constructor(deps: { db: DatabaseSync; store: EventLogStore; clock: Clock; log: Logger; limits: () => EventLimits }) {
    this.#db = deps.db;
    this.#store = deps.store;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#limits = deps.limits;
    const saved = deps.store.load();
    this.#recent = saved.events;
    for (const e of this.#recent) this.#recentBytes += e.data.length;
    this.#last = saved.clean ? Math.max(saved.savedTo, saved.reservedTo) : saved.reservedTo;
    this.#committed = this.#last;
    this.lost = !saved.clean && saved.reservedTo > saved.savedTo ? { from: saved.savedTo + 1, to: saved.reservedTo } : null;
    // The first event reserves the first block (publish): a run that publishes nothing writes nothing.
    this.#reservedTo = this.#last;
    this.#trim();
  }

  get limits(): EventLimits {
    return this.#limits();
  }

  /** The id of the latest event given out (its transaction may still be open). */
  get lastId(): number {
    return this.#last;
  }

  /** The id of the latest event whose transaction committed: followers have heard it. */
  get lastCommitted(): number {
    return this.#committed;
  }

  /** The oldest event a client may still be given again; null when none is kept. */
  firstKept(): number | null {
    return this.#recent[this.#head]?.id ?? null;
  }

  /** Up to `limit` kept events after `id`, oldest first. */
  after(id: number, limit: number): LoggedEvent[] {
    let lo = this.#head;
    let hi = this.#recent.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#recent[mid].id <= id) lo = mid + 1;
      else hi = mid;
    }
    return this.#recent.slice(lo, lo + limit);
  }

  publish(type: EventType, body: Record<string, unknown>, scope: { interfaceId?: string | null; kind?: string | null } = {}): void {
    const id = ++this.#last;
    if (id > this.#reservedTo) {
      this.#reservedTo = id + ID_BLOCK;
      try {
        this.#store.reserve(this.#reservedTo);
      } catch (error) {
        // Written again with the next block; a crash before then may give out an id twice.
        this.#log.warn('event_ids_not_reserved', { id, error: (error as Error).message });
      }
    }
    const at = new Date(this.#clock.now()).toISOString();
    const event: LoggedEvent = { id, at, type, interface_id: scope.interfaceId ?? null, kind: scope.kind ?? null, data: JSON.stringify({ id, type, at, ...body }) };
    afterCommit(this.#db, () => {
      this.#committed = Math.max(this.#committed, id);
      this.#keep(event);
      for (const follower of this.#followers) follower(event);
    });
  }

  #keep(event: LoggedEvent): void {
    const limits = this.#limits();
    if (limits.log_max_events === 0) return;
    this.#recent.push(event);
    this.#recentBytes += event.data.length;
    this.#cutToSize(limits);
    if (Math.abs(this.#clock.now() - this.#ageCutAt) >= 1000) this.#cutByAge(limits);
    this.#compact();
  }

  /** Cuts the kept events to bridge.events' bounds (count, bytes, age). */
  prune(): void {
    this.#trim();
  }

  #trim(): void {
    const limits = this.#limits();
    this.#cutToSize(limits);
    this.#cutByAge(limits);
    this.#compact();
  }

  #cutToSize(limits: EventLimits): void {
    const maxBytes = limits.log_max_kib * 1024;
    while (this.#head < this.#recent.length && (this.#recent.length - this.#head > limits.log_max_events || this.#recentBytes > maxBytes)) this.#dropOldest();
  }

  #cutByAge(limits: EventLimits): void {
    const now = this.#clock.now();
    this.#ageCutAt = now;
    const oldest = new Date(now - limits.log_max_hours * 3_600_000).toISOString();
    while (this.#head < this.#recent.length && this.#recent[this.#head].at < oldest) this.#dropOldest();
  }

  #dropOldest(): void {
    this.#recentBytes -= this.#recent[this.#head].data.length;
    // The slot lets go of the event, so the byte bound holds for memory until the next copy.
    this.#recent[this.#head] = undefined as unknown as LoggedEvent;
    this.#head++;
  }

  /** Gives back the dropped front once it is half the array (a copy per that many events). */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#recent.length) {
      this.#recent = this.#recent.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Writes the kept events for the next start (the bridge stops). */
  save(): void {
    this.#trim();
    this.#store.save(this.#recent.slice(this.#head), this.#last);
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
