import type { KeyObject } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import type { Counter } from '../../lib/metrics.ts';
import { ACK_KIND, EVENT_KINDS, leadingSeq, parseUplinkTopic, type UplinkKind } from '../../hubwire/topics.ts';
import { hasSignature, parseEnrollRequest, parseEnrollTopic, verifyPayload } from '../../hubwire/credentials.ts';
import { decodeForIngest } from './decode.ts';
import type { AckState, BatchOp, BatchOutcome, BridgeAuth, HubStore } from '../store/store.ts';
import { EVENT_TABLES } from '../store/store.ts';

// Group commit for the hub's ingest. Messages are taken as the MQTT client
// parses them and written in batches: one transaction per batch (src/hub/store/ingest-batch.ts),
// the tenant checks from the store's cache, and each message's `done` called only after its
// batch committed, in the order the messages came (the subscriber sends the PUBACKs from
// there, and MQTT wants them in order: [MQTT-4.6.0-2]).
//
// When a batch is written:
//  - at once when MAX_BATCH messages are waiting;
//  - otherwise FLUSH_DELAY_MS after the first message of a quiet moment;
//  - while one batch is being written the next one gathers, and is written right after it
//    (one batch in flight at a time: the PUBACK order follows the commit order).
// The figures are measured (docs/hub.md, "Ingest batches"; docs/performance.md, "Hub ingest").
//
// A failing batch: when the database refused the rows' values (store.isRowError: e.g. a NUL
// character PostgreSQL refuses in text), the batch is split in halves until the "poison"
// event is alone; the others are stored, and that one is dropped, counted as `store_failed`
// and acknowledged, so it does not come back forever. Any other failure (database down, busy,
// disk full) is the database's, not an event's: nothing of the batch is acknowledged and the
// error goes to `done`; the subscriber drops the connection and the broker sends it all again.
//
// Who may write (docs/hub.md, "Enrollment"): a message's bridge id finds the
// enrolled bridge's credentials (from the store's cache); the message is taken only when the
// topic's tenant is that bridge's, the bridge is not revoked and the payload's sig verifies
// under its secret. Everything else is dropped before it can touch any table (not even
// bridge_seqs: a forger must not be able to fill or settle a bridge's sequence numbers) and
// counted by reason: unknown_bridge, not_enrolled (its token not traded yet), wrong_tenant,
// revoked_bridge, unsigned, bad_signature. With acceptUnenrolled (HUB_ACCEPT_UNENROLLED=1, for
// a fleet moving to enrollment), a bridge id that was never enrolled may still publish
// unsigned; an enrolled one never may. A bridge counts as verified (its token spent) once a
// signed message of it passed every check, the tenant's included.
// Enrollment requests (fieldbridge/v1/_enroll/<nonce>/request) are answered after the batch's
// events are stored, malformed ones dropped before they count, one per token, at most
// ENROLL_PER_BATCH tokens per batch (the rest are dropped and counted as enroll_busy; the bridge
// asks again), so a flood of requests cannot hold the events up for long, and nothing after the
// batch's commit fails the batch; the replies, heard back through the wildcard, are skipped.
//
// An event refused before the database (too_large, bad_json, bad_payload) whose payload starts
// as a bridge writes it (`{"seq":N,`) has its number recorded as done, like a `gone` report:
// otherwise the hub would ask the bridge for it forever, and enough such gaps would stall the
// bridge's window. The hub's own acks, heard through the wildcard, are
// skipped by topic before any decoding.

/** Messages written in one transaction at most. */
export const MAX_BATCH = 500;
/** Enrollment requests answered per batch at most (each is a lookup and maybe a write). */
export const ENROLL_PER_BATCH = 16;
/** How long the first message of a quiet moment waits for company. */
export const FLUSH_DELAY_MS = 2;

export type Done = (error?: Error) => void;

/** A bridge's sequence state to acknowledge, with the secret to sign the ack (enrolled bridges). */
export type SignedAck = AckState & { secret?: KeyObject };

export interface BatcherOptions {
  store: HubStore;
  clock: Clock;
  stored: Counter;
  reject(reason: string, fields: Record<string, unknown>): void;
  /** The bridges' sequence states after a batch committed, before its messages are done
   *  (the subscriber publishes them as acks). */
  acknowledge?(acks: SignedAck[]): void;
  /** Answers an enrollment request (publishes the reply); a failure fails the batch. */
  enroll?(nonce: string, payload: Uint8Array): Promise<void>;
  /** Unsigned messages of bridge ids never enrolled are taken (docs/hub.md). */
  acceptUnenrolled?: boolean;
  maxBatch?: number;
  flushDelayMs?: number;
}

interface Taken {
  topic: string;
  payload: Uint8Array;
  done: Done;
}

export class IngestBatcher {
  readonly #o: BatcherOptions;
  readonly #max: number;
  readonly #delay: number;
  #queue: Taken[] = [];
  #running: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #roomWaiters: Array<{ below: number; fn: () => void }> = [];

  constructor(options: BatcherOptions) {
    this.#o = options;
    this.#max = options.maxBatch ?? MAX_BATCH;
    this.#delay = options.flushDelayMs ?? FLUSH_DELAY_MS;
  }

  /** Queues one message; done runs once its batch is stored (or failed). */
  take(topic: string, payload: Uint8Array, done: Done): void {
    this.#queue.push({ topic, payload, done });
    if (this.#running) return;
    if (this.#queue.length >= this.#max) this.#start();
    else this.#timer ??= setTimeout(() => this.#start(), this.#delay);
  }

  /** Runs fn once fewer than `below` messages wait (at once if that is so now). */
  whenBelow(below: number, fn: () => void): void {
    if (this.#queue.length < below) fn();
    else this.#roomWaiters.push({ below, fn });
  }

  /** Writes whatever is queued; resolves when nothing is left or in flight. */
  async drain(): Promise<void> {
    this.#start();
    while (this.#running) await this.#running;
  }

  #start(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running || this.#queue.length === 0) return;
    this.#running = this.#loop().finally(() => {
      this.#running = undefined;
      // Anything taken while the loop was finishing goes out now, not after a delay.
      if (this.#queue.length > 0) this.#start();
    });
  }

  async #loop(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.length <= this.#max ? this.#queue : this.#queue.slice(0, this.#max);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#max);
      this.#wake();
      let failure: Error | undefined;
      try {
        await this.#write(batch);
      } catch (error) {
        failure = error as Error;
      }
      for (const t of batch) t.done(failure);
      this.#wake();
    }
  }

  #wake(): void {
    if (this.#roomWaiters.length === 0) return;
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const w of waiters) this.whenBelow(w.below, w.fn);
  }

  async #write(batch: Taken[]): Promise<void> {
    const { store, clock } = this.#o;
    const at = new Date(clock.now()).toISOString();
    const ops: BatchOp[] = [];
    const kinds: Array<UplinkKind | null> = [];
    // kind null: not counted in the ingest tally (a refused event's number, counted as rejected).
    const candidates: Array<{ tenant: string; kind: UplinkKind | null; op: BatchOp; auth?: BridgeAuth }> = [];
    const tally = new Map<string, { kind: string; result: string; n: number }>();
    const count = (kind: string, result: string) => {
      const key = kind + ' ' + result;
      const t = tally.get(key);
      if (t) t.n++;
      else tally.set(key, { kind, result, n: 1 });
    };
    const enrollRequests = new Map<string, { nonce: string; payload: Uint8Array }>();
    const parsed: Array<{ topic: string; payload: Uint8Array; t: { tenant: string; bridgeId: string; kind: UplinkKind } }> = [];
    const bridgeIds = new Set<string>();
    for (const { topic, payload } of batch) {
      const enroll = parseEnrollTopic(topic);
      if (enroll) {
        if (enroll.kind !== 'request') continue;
        // Checked before it takes one of the batch's places: junk never crowds out a bridge.
        // One per token (the newest: its bridge waits for that nonce's reply).
        const request = parseEnrollRequest(payload);
        if (!request.ok) this.#o.reject('enroll_bad_request', { nonce: enroll.nonce, detail: request.detail });
        else if (enrollRequests.size < ENROLL_PER_BATCH || enrollRequests.has(request.lookup)) {
          enrollRequests.delete(request.lookup);
          enrollRequests.set(request.lookup, { nonce: enroll.nonce, payload });
        } else this.#o.reject('enroll_busy', { nonce: enroll.nonce });
        continue;
      }
      const t = parseUplinkTopic(topic);
      if (!t.ok) {
        this.#o.reject(t.reason, { topic });
        continue;
      }
      // The hub's own acknowledgements (and other replicas'), heard through the wildcard:
      // skipped before decoding (no JSON parse, no schema walk for each of them).
      if (t.kind === ACK_KIND) continue;
      // An empty retained message clears the broker's copy; it carries nothing to check or store.
      if (payload.length === 0) {
        count(t.kind, 'cleared');
        continue;
      }
      parsed.push({ topic, payload, t });
      bridgeIds.add(t.bridgeId);
    }
    const bridges = bridgeIds.size > 0 ? await store.ingestBridges(bridgeIds) : new Map<string, BridgeAuth | undefined>();
    for (const { topic, payload: received, t } of parsed) {
      const auth = bridges.get(t.bridgeId);
      let payload: Uint8Array | string = received;
      if (auth) {
        const refused = !auth.secret ? (auth.revoked ? 'revoked_bridge' : 'not_enrolled') : auth.tenantId !== t.tenant ? 'wrong_tenant' : null;
        if (refused) {
          this.#o.reject(refused, { topic });
          continue;
        }
        const check = verifyPayload(auth.secret!, topic, received);
        if (!check.ok) {
          this.#o.reject(check.reason, { topic });
          continue;
        }
        payload = check.text;
      } else if (!this.#o.acceptUnenrolled || hasSignature(received)) {
        this.#o.reject('unknown_bridge', { topic });
        continue;
      }
      const decoded = decodeForIngest(t.kind, payload);
      if (!decoded.ok) {
        if (decoded.reason === 'empty') count(t.kind, 'cleared');
        else {
          this.#o.reject(decoded.reason, { topic, detail: decoded.detail });
          // Its sequence number, if it has one, counts as done (gone): never asked for again.
          const seq = (EVENT_KINDS as readonly string[]).includes(t.kind) ? leadingSeq(typeof payload === 'string' ? Buffer.from(payload.slice(0, 32)) : payload) : null;
          if (seq !== null) candidates.push({ tenant: t.tenant, kind: null, op: { op: 'gone', tenantId: t.tenant, bridgeId: t.bridgeId, ranges: [[seq, seq]], at } });
        }
        continue;
      }
      let op: BatchOp;
      if (decoded.kind === 'ack') continue;
      if (decoded.kind === 'gone') {
        op = { op: 'gone', tenantId: t.tenant, bridgeId: t.bridgeId, ranges: decoded.value.ranges, at };
      } else if (decoded.kind === 'hello') {
        op = { op: 'hello', tenantId: t.tenant, bridgeId: t.bridgeId, version: decoded.value.version, interfaces: decoded.value.interfaces, at };
      } else if (decoded.kind === 'status') {
        op = { op: 'status', tenantId: t.tenant, bridgeId: t.bridgeId, ...decoded.value, at };
      } else {
        const v = decoded.value;
        op = { op: 'event', event: { table: EVENT_TABLES[decoded.kind], tenant_id: t.tenant, event_id: v.event_id, bridge_id: t.bridgeId, ts: v.ts, body: decoded.text, received_at: at } };
        if (typeof v.seq === 'number') op.seq = v.seq;
      }
      candidates.push({ tenant: t.tenant, kind: t.kind, op, auth });
    }
    const verified = new Set<BridgeAuth>();
    if (candidates.length > 0) {
      // Tenants are made by operators, never by publishing (docs/hub.md); one marked for
      // deletion takes no new data.
      const tenants = await store.ingestTenants(candidates.map((c) => c.tenant));
      for (const c of candidates) {
        const tenant = tenants.get(c.tenant);
        if (!tenant) this.#o.reject('unknown_tenant', { tenant: c.tenant });
        else if (tenant.deleted_at) this.#o.reject('tenant_deleted', { tenant: c.tenant });
        else {
          ops.push(c.op);
          if (c.auth && !c.auth.verified) verified.add(c.auth);
          kinds.push(c.kind);
        }
      }
    }
    if (ops.length > 0) {
      const acks: AckState[] = [];
      const outcomes = await this.#isolating(ops, acks);
      for (let i = 0; i < ops.length; i++) if (outcomes[i] !== 'failed' && kinds[i] !== null) count(kinds[i]!, outcomes[i] as string);
      if (acks.length > 0) this.#o.acknowledge?.(latestPerBridge(acks).map((a) => ({ ...a, secret: bridges.get(a.bridgeId)?.secret ?? undefined })));
    }
    for (const t of tally.values()) this.#o.stored.inc({ kind: t.kind, result: t.result }, t.n);
    // The batch is stored: what follows must not fail it (that would make the broker send it
    // all again). The token of a bridge whose first signed message arrived is spent
    // (bridges/service.ts); a failure here is tried again with the bridge's next batch.
    for (const auth of verified) {
      try {
        await store.markEnrollmentVerified(auth.id, auth.secretText!, at);
      } catch (error) {
        this.#o.reject('verify_mark_failed', { bridge: auth.id, error: (error as Error).message });
      }
    }
    for (const r of enrollRequests.values()) await this.#enroll(r.nonce, r.payload);
  }

  /** One exchange; a failure is counted and left unanswered (the bridge asks again). */
  async #enroll(nonce: string, payload: Uint8Array): Promise<void> {
    if (!this.#o.enroll) {
      this.#o.reject('enroll_unavailable', { nonce });
      return;
    }
    try {
      await this.#o.enroll(nonce, payload);
    } catch (error) {
      this.#o.reject('enroll_failed', { nonce, error: (error as Error).message });
    }
  }

  /** Writes ops; when the rows' values made that fail, finds the event(s) at fault by halving. */
  async #isolating(ops: BatchOp[], acks: AckState[]): Promise<Array<BatchOutcome | 'failed'>> {
    const failures: Array<{ op: BatchOp; error: Error }> = [];
    const outcomes = await this.#halving(ops, failures, acks);
    // Not one could be written: that is no poison event but a fault of ours (a statement the
    // database refuses for any row); nothing is dropped, all of it comes again.
    if (ops.length > 1 && failures.length === ops.length) throw failures[0].error;
    for (const { op, error } of failures) {
      const what = op.op === 'event' ? { tenant: op.event.tenant_id, bridge: op.event.bridge_id, event_id: op.event.event_id } : { tenant: op.tenantId, bridge: op.bridgeId, kind: op.op };
      this.#o.reject('store_failed', { ...what, error: error.message });
      // Dropped and acknowledged (as its PUBACK): its sequence number counts as done, or the
      // hub would ask the bridge for it forever.
      if (op.op === 'event' && op.seq !== undefined) {
        try {
          const done = await this.#o.store.ingestBatch([{ op: 'gone', tenantId: op.event.tenant_id, bridgeId: op.event.bridge_id, ranges: [[op.seq, op.seq]], at: op.event.received_at }]);
          if (done.acks) acks.push(...done.acks);
        } catch (e) {
          // The number itself refused (its values again): the event stays dropped and
          // acknowledged, and the rest of the batch, stored already, is not failed for it.
          // The database's state (down, busy) fails the batch: it all comes again.
          if (!this.#o.store.isRowError(e)) throw e;
          this.#o.reject('seq_failed', { tenant: op.event.tenant_id, bridge: op.event.bridge_id, seq: op.seq, error: (e as Error).message });
        }
      }
    }
    return outcomes;
  }

  async #halving(ops: BatchOp[], failures: Array<{ op: BatchOp; error: Error }>, acks: AckState[]): Promise<Array<BatchOutcome | 'failed'>> {
    const { store } = this.#o;
    try {
      const outcomes = await store.ingestBatch(ops);
      if (outcomes.acks) acks.push(...outcomes.acks);
      return outcomes;
    } catch (error) {
      // The database's state (down, busy, full): nothing is acknowledged, all comes again.
      if (!store.isRowError(error)) throw error;
      if (ops.length === 1) {
        failures.push({ op: ops[0], error: error as Error });
        return ['failed'];
      }
      const half = ops.length >> 1;
      return [...(await this.#halving(ops.slice(0, half), failures, acks)), ...(await this.#halving(ops.slice(half), failures, acks))];
    }
  }
}

/** The last state of each bridge (later sub-batches know more), keeping a handshake's conn. */
function latestPerBridge(acks: AckState[]): AckState[] {
  const out = new Map<string, AckState>();
  for (const a of acks) {
    const key = a.tenantId + '\u0000' + a.bridgeId;
    const conn = a.conn ?? out.get(key)?.conn;
    out.set(key, conn === undefined ? a : { ...a, conn });
  }
  return [...out.values()];
}
