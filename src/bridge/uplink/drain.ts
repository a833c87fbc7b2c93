import type { MqttClient } from 'mqtt';
import { toRanges } from '../../hubwire/topics.ts';
import { groupBetweenUnits, groupCommitted } from './commits.ts';
import type { OutboxRow } from './outbox.ts';
import type { UplinkParts } from './parts.ts';

// The outbox drain: publishes outbox rows in order at QoS 1, each with its wire sequence number
// spliced in front (`{"seq":N,` + the stored text), while the connection is live and this
// boot's numbering is settled (boot.ts). Rows to send again (in-flight.ts) go before new ones.
//
// Flow: at most `window` rows published and not yet acknowledged; at most `rate` publishes a
// second. One drain runs at a time; a call while it runs makes it go round once more.

const BUSY_RETRY_MS = 50;

export interface OutboxDrainOptions extends UplinkParts {
  /** Rows published per round (default 50). */
  batch?: number;
  /** Rows published and not yet acknowledged, at most (default 500). */
  window?: number;
  /** Publishes per second, at most (default 1000). */
  rate?: number;
}

export class OutboxDrain {
  readonly #o: OutboxDrainOptions;
  readonly #batch: number;
  readonly #window: number;
  readonly #rate: number;
  #draining = false;
  #again = false;
  #done: Promise<void> = Promise.resolve();
  /** When (performance.now()) the pace allows the next publish. */
  #paceAt = 0;

  constructor(options: OutboxDrainOptions) {
    this.#o = options;
    this.#batch = options.batch ?? 50;
    this.#window = options.window ?? 500;
    this.#rate = options.rate ?? 1000;
  }

  /** Settles when the current drain (if any) has finished. */
  get done(): Promise<void> {
    return this.#done;
  }

  /** Publishes what the window and the pace allow, now or once the running drain ends. */
  run(): void {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    const client = this.#o.connection.live;
    if (!client || !this.#o.boot.numbered) return;
    this.#draining = true;
    this.#done = this.#rounds(client)
      .catch((error) => this.#o.log.warn('uplink_publish_failed', { error: (error as Error).message, note: 'kept in the outbox; sent again after the reconnect' }))
      .finally(() => {
        this.#draining = false;
        if (this.#again) {
          this.#again = false;
          this.run();
        }
      });
  }

  async #rounds(client: MqttClient): Promise<void> {
    const { db, outbox, acked, inFlight, connection } = this.#o;
    while (connection.client === client && connection.state === 'connected') {
      if (db.isTransaction) {
        // Someone's transaction is open on our connection: reading now could publish a row
        // that is then rolled back. Look again shortly, or once the open group of ingests
        // commits (db/transaction.ts; a failed group's rows are never published).
        if (groupBetweenUnits(db)) await groupCommitted(db);
        else await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
        continue;
      }
      if (!db.isOpen) return;
      const room = Math.min(this.#batch, this.#window - inFlight.count);
      if (room <= 0) return; // the next ack (or the timeout) goes on
      let rows: OutboxRow[];
      if (inFlight.resends > 0) {
        const wanted = inFlight.takeResends(room);
        rows = toRanges(wanted).flatMap(([lo, hi]) => outbox.after(lo - 1, hi - lo + 1).filter((r) => r.seq <= hi && !acked.has(r.seq)));
      } else {
        rows = outbox.after(inFlight.cursor, room).filter((r) => !acked.has(r.seq));
        if (rows.length === 0) {
          const more = outbox.after(inFlight.cursor, room);
          if (more.length === 0) return;
          inFlight.passTo(more[more.length - 1].seq);
          continue;
        }
      }
      if (rows.length === 0) continue;
      // Paced: at most `rate` a second, whether first sends or resends. Counted on the same
      // clock as the setTimeout below (monotonic, real): a wall-clock step never stalls it.
      const now = performance.now();
      this.#paceAt = Math.max(this.#paceAt, now) + (rows.length * 1000) / this.#rate;
      const sentAt = this.#o.clock.now();
      inFlight.publishing(sentAt);
      const { identity, boot } = this.#o;
      const published = rows.map((row) => {
        inFlight.published(row.seq, sentAt);
        const wire = `{"seq":${row.seq + boot.offset},${row.payload.slice(1)}`;
        const topic = identity.topic(row.kind);
        return client.publishAsync(topic, identity.seal(topic, wire), { qos: 1 });
      });
      // The broker's PUBACK only paces us (mqtt.js holds what is in flight in memory); the row
      // stays until the hub acknowledges it.
      await Promise.all(published);
      const wait = this.#paceAt - performance.now() - 1000 / this.#rate;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
}
