import type { DatabaseSync } from 'node:sqlite';
import type { DriverModule } from '../../bearers/driver-module.ts';
import type { OpenLinkOptions } from '../../bearers/shared/links/open-link.ts';
import type { Clock } from '../../lib/clock.ts';
import { EventStream } from '../../lib/events.ts';
import type { Logger } from '../../lib/log.ts';
import { Dispatcher } from './dispatcher.ts';
import { FallbackService } from './fallback.ts';
import { FallbackStore } from './fallback-store.ts';
import { DeliveryStore } from './delivery-store.ts';
import { WriteBehind } from './write-behind.ts';
import { BearerHost, type DeviceConfigSource } from './bearer-host.ts';
import type { InterfaceStore } from './interface-store.ts';
import { MessageStore } from './message-store.ts';
import type { AddressBooks, RuleDecider, SenderScreen } from './deciders.ts';
import type { RouterEvent } from './events.ts';
import { Pipeline } from './pipeline.ts';
import { SeenFrameStore } from './seen-frames.ts';
import { NodeIdentity } from './node-identity.ts';
import { NodeStore } from './node-store.ts';
import { DriverStateStore } from './driver-state.ts';
import { DeferredWrites, writeLockFree } from '../../db/busy.ts';
import { onGroupFailed } from '../../db/sqlite.ts';
import type { NodeReport } from '../../bearers/bearer.ts';
import { HeldFrames } from './held-frames.ts';

// The routing core (docs/architecture.md, "The message path"): the parts a message passes
// through, built in the order it passes them, each given what it needs when it is made:
//
//   bearer --frame--> BearerHost --receive--> Pipeline --rows--> stores --'queued'--> Dispatcher --send--> BearerHost --> bearer
//
// Nothing is wired after construction. The parts tell each other, and the rest of the bridge
// (uplink, metrics), through one event stream; the dispatcher listens for new deliveries and
// for links coming up.

export interface RoutingCoreDeps {
  db: DatabaseSync;
  clock: Clock;
  log: Logger;
  interfaceStore: InterfaceStore;
  /** The deciders (engine/deciders.ts): app.ts builds them and hands them in. */
  rules: RuleDecider;
  books: AddressBooks;
  senders: SenderScreen;
  deviceConfig: DeviceConfigSource;
  /** Random source for retry jitter (tests make it deterministic). */
  random?: () => number;
  /** The driver of a kind (default: bearers/drivers.ts); tests add their own. */
  drivers?: (kind: string) => DriverModule | undefined;
  linkOptions?: OpenLinkOptions;
  /** How long delivery states wait for a commit to ride (write-behind.ts GROUP_COMMIT_MS);
   *  tests that step the dispatcher turn by turn pass 0. */
  groupCommitMs?: number;
  /** Which node an address names now; app.ts makes it first, for the rules and the senders
   *  policy too (default: one of the core's own). */
  identity?: NodeIdentity;
}

export class RoutingCore {
  readonly events = new EventStream<RouterEvent>();
  readonly writeBehind: WriteBehind;
  readonly messages: MessageStore;
  readonly deliveries: DeliveryStore;
  readonly seen: SeenFrameStore;
  readonly nodes: NodeStore;
  readonly driverState: DriverStateStore;
  readonly held: HeldFrames;
  readonly deferred: DeferredWrites;
  readonly fallbacks: FallbackService;
  readonly pipeline: Pipeline;
  readonly host: BearerHost;
  readonly dispatcher: Dispatcher;

  constructor(d: RoutingCoreDeps) {
    const { db, clock, log, events } = { ...d, events: this.events };
    this.writeBehind = new WriteBehind(db, log, { groupCommitMs: d.groupCommitMs });
    this.messages = new MessageStore(db);
    this.deliveries = new DeliveryStore(db, this.writeBehind, events);
    this.seen = new SeenFrameStore(db);
    this.nodes = new NodeStore(db, d.identity ?? new NodeIdentity(db));
    // Whether a member of a fallback list can take a message now asks the bearer host, made
    // below (it needs the pipeline as its sink): read at call time.
    const canTake = (interfaceId: string) => this.#canTake(d.interfaceStore, interfaceId);
    this.fallbacks = new FallbackService({ db, store: new FallbackStore(db), deliveries: this.deliveries, messages: this.messages, interfaces: d.interfaceStore, events, clock, log, canTake, addresses: this.nodes.identity });
    this.pipeline = new Pipeline({
      db, clock, log, events, messages: this.messages, deliveries: this.deliveries, seen: this.seen, fallbacks: this.fallbacks,
      interfaces: d.interfaceStore, rules: d.rules, books: d.books, senders: d.senders, addresses: this.nodes.identity,
    });
    // What bearers hand over must not wait for another process's lock on the event loop:
    // frames wait in order in memory, node reports and driver state in a
    // queue of writes, until the lock is free.
    this.held = new HeldFrames({ db, pipeline: this.pipeline, log });
    this.deferred = new DeferredWrites(db, log, 'deferred_writes');
    this.driverState = new DriverStateStore(db, this.deferred);
    const nodes = { upsert: (interfaceId: string, report: NodeReport, nowIso: string) => this.deferred.run(() => this.#nodeReport(interfaceId, report, nowIso, d)) };
    this.host = new BearerHost({ log, clock, events, sink: this.held, nodes, driverState: this.driverState, deviceConfig: d.deviceConfig, drivers: d.drivers, linkOptions: d.linkOptions });
    this.dispatcher = new Dispatcher({
      store: this.deliveries, writeBehind: this.writeBehind, host: this.host, events, interfaces: d.interfaceStore, messages: this.messages, nodes: this.nodes, clock, log, random: d.random,
      lockFree: () => writeLockFree(db),
    });
    // A group of ingests whose COMMIT failed (a full disk, an I/O error; db/transaction.ts) took
    // its messages and deliveries with it, and every acknowledgement waiting for it was refused
    // (an HTTP 5xx, a bearer told "not stored": the sender repeats them). The due deliveries the
    // dispatcher read from it are read again from the file; a send already on the air goes out
    // once more when its sender repeats the message (at least once), and its outcome, written
    // later, finds no row.
    onGroupFailed(db, (error) => {
      this.deliveries.generation++;
      log.error('group_commit_failed', { error: (error as Error)?.message, note: 'the messages of the last group were not stored; their senders were told so and send them again' });
    });
  }

  /** Stores a node report; a renumbered node takes what waits for its former id along. */
  #nodeReport(interfaceId: string, report: NodeReport, nowIso: string, d: RoutingCoreDeps): void {
    const change = this.nodes.upsert(interfaceId, report, nowIso);
    if (!change) return;
    if (change.type === 'renumbered') {
      const moved = this.deliveries.readdress(change.former_id, change.node_id, d.clock.now());
      d.log.warn('node_renumbered', {
        interface_id: interfaceId, network: change.network, former_id: change.former_id, node_id: change.node_id, deliveries_readdressed: moved.length,
        note: 'the same public key under a new number (a firmware upgrade or a number collision): the node keeps its history, and what named the former id reaches it at the new one',
      });
    } else {
      d.log.warn('node_key_conflict', {
        interface_id: interfaceId, network: change.network, node_id: change.node_id, known_key: change.known_key, claimed_key: change.claimed_key,
        note: 'a second node claims this number with another public key; the report was not stored and the number stays with the key first seen under it',
      });
    }
    this.events.emit({ type: 'node', interfaceId, change });
  }

  /** Why an interface cannot take a message now, or null (docs/routing.md, "Fallback lists"). */
  #canTake(interfaces: InterfaceStore, interfaceId: string): string | null {
    const row = interfaces.find(interfaceId);
    if (!row) return 'the interface no longer exists';
    if (!row.enabled) return 'disabled';
    if (row.device === null) return 'unbound';
    const rt = this.host.runtime(interfaceId);
    // A bearer out of its day or month budget says so in its state's reason.
    if (rt.reason === 'budget') return `out of budget${rt.last_error ? ` (${rt.last_error})` : ''}`;
    if (!rt.connected) return `offline${rt.last_error ? ` (${rt.last_error})` : ''}`;
    return null;
  }

  /** Recovers deliveries a crash left on the air and starts sending. Bearers may start before.
   *  Fallback lists first: a member whose deadline passed while the bridge was down escalates
   *  (and is cancelled) before its queue could put it on the air again. */
  start(): void {
    this.fallbacks.start();
    this.dispatcher.start();
  }

  /** No new sends; bearers stop (sends on the air go back to their queue without spending an
   *  attempt); then every state change is committed. */
  async stop(graceMs: number): Promise<void> {
    this.dispatcher.pause();
    this.fallbacks.stop();
    await this.host.stopAll();
    this.held.close();
    this.deferred.close();
    await this.dispatcher.drain(Math.min(graceMs, 5000));
  }
}
