import type { DatabaseSync } from 'node:sqlite';
import { transaction } from '../../db/transaction.ts';

// The SQL of the event log (docs/events.md, "Resume"). The feed keeps recent events in memory;
// here they are saved when the bridge stops and read back when it starts, so nothing is written
// per event. Ids are reserved in blocks (event_ids.reserved_to): after a crash the next run
// starts above every id the crashed one may have given out.

export interface LoggedEvent {
  id: number;
  at: string;
  type: string;
  interface_id: string | null;
  kind: string | null;
  /** The event's JSON, as streamed. */
  data: string;
}

export interface SavedLog {
  events: LoggedEvent[];
  /** Every id up to here may have been given out. */
  reservedTo: number;
  /** The last id the previous run saved (its events are `events`). */
  savedTo: number;
  /** Whether the previous run stopped cleanly and saved its events. */
  clean: boolean;
}

export class EventLogStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  load(): SavedLog {
    const ids = this.#db.prepare('SELECT reserved_to, saved_to, clean FROM event_ids WHERE one = 1').get() as { reserved_to: number; saved_to: number; clean: number };
    const events = (this.#db.prepare('SELECT id, at, type, interface_id, kind, data FROM event_log ORDER BY id').all() as unknown as LoggedEvent[]).map((r) => ({ ...r, id: Number(r.id) }));
    return { events, reservedTo: Number(ids.reserved_to), savedTo: Number(ids.saved_to), clean: ids.clean === 1 };
  }

  /** Ids up to `upTo` may be given out from now on; the run is not clean until save(). */
  reserve(upTo: number): void {
    this.#db.prepare('UPDATE event_ids SET reserved_to = ?, clean = 0 WHERE one = 1').run(upTo);
  }

  /** Replaces the saved events with `events` (the run stops cleanly). */
  save(events: readonly LoggedEvent[], lastId: number): void {
    transaction(this.#db, () => {
      this.#db.exec('DELETE FROM event_log');
      const insert = this.#db.prepare('INSERT INTO event_log (id, at, type, interface_id, kind, data) VALUES (?, ?, ?, ?, ?, ?)');
      for (const e of events) insert.run(e.id, e.at, e.type, e.interface_id, e.kind, e.data);
      this.#db.prepare('UPDATE event_ids SET reserved_to = max(reserved_to, ?), saved_to = ?, clean = 1 WHERE one = 1').run(lastId, lastId);
    });
  }
}
