import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { TOPIC_SEGMENT } from '../../hubwire/topics.ts';
import { type EnrollRefusal, enrollRefusal, mintEnrollmentToken, parseEnrollRequest, sealEnrollReply, verifyEnrollProof } from '../../hubwire/credentials.ts';
import type { EnrollmentRow, HubStore } from '../store/store.ts';

// Bridge enrollments (docs/hub.md, "Enrollment"). An owner or admin makes one
// (POST /api/bridges): the hub gives the bridge its id and a one-time enrollment token, shown
// only in that answer and kept as a hash. The bridge trades the token over MQTT for its secret
// (exchange() below, called by the ingest for fieldbridge/v1/_enroll/<nonce>/request); from
// then on the hub stores only messages signed with that secret (src/hub/ingest/batcher.ts).
//
// The token works until the first message signed with the secret arrives (verified_at): an
// exchange whose reply was lost (the bridge rebooted, the broker dropped it) can be repeated.
// A request newer (by the time in it, which the proof covers) than the newest that made a
// secret makes a new one, so a copy of the token traded by someone else shows at once as the
// real bridge's messages refused (bad_signature). Any other request (the same one redelivered
// after a failed batch or heard by two replicas without a shared subscription, an older one
// handled late by another replica, a replay of a recording) gets the secret held sealed again:
// it never leaves the bridge with a secret the hub has replaced, and a replay gains nothing
// (its reply is sealed to the recorded request's ephemeral key). After the first signed
// message the token is spent.

export type EnrollmentState = 'waiting' | 'enrolled' | 'revoked';

export interface EnrollmentView {
  id: string;
  name: string;
  state: EnrollmentState;
  created_at: string;
  enrolled_at: string | null;
  verified_at: string | null;
  revoked_at: string | null;
}

export interface CreatedEnrollment {
  id: string;
  name: string;
  token: string;
  created_at: string;
}

/** What an exchange comes to: the reply to publish, and the outcome for the ingest's counters. */
export interface ExchangeResult {
  reply: string;
  outcome: 'exchanged' | 'bad_request' | EnrollRefusal;
  bridgeId?: string;
}

export function enrollmentView(r: EnrollmentRow): EnrollmentView {
  const state: EnrollmentState = r.revoked_at ? 'revoked' : r.verified_at ? 'enrolled' : 'waiting';
  return { id: r.id, name: r.name, state, created_at: r.created_at, enrolled_at: r.enrolled_at, verified_at: r.verified_at, revoked_at: r.revoked_at };
}

export class BridgeEnrollments {
  readonly #store: HubStore;
  readonly #clock: Clock;

  constructor(store: HubStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  async create(tenantId: string, name: string): Promise<CreatedEnrollment> {
    const now = this.#clock.now();
    const at = new Date(now).toISOString();
    const minted = mintEnrollmentToken();
    // brg_ + 26 time-sortable characters: a topic level (TOPIC_SEGMENT) and a paging cursor.
    const id = newId('brg', now);
    if (!TOPIC_SEGMENT.test(id)) throw new Error(`bridge id ${id} is not a topic level`);
    await this.#store.insertEnrollment({ id, tenant_id: tenantId, name, token_lookup: minted.lookup, token_hash: minted.hash, secret: null, created_at: at, enrolled_at: null, verified_at: null, revoked_at: null });
    return { id, name, token: minted.key, created_at: at };
  }

  async list(tenantId: string, page: { afterId?: string; limit: number }): Promise<EnrollmentView[]> {
    return (await this.#store.listEnrollments(tenantId, page)).map(enrollmentView);
  }

  /** Revokes at once on this hub (its ingest cache is dropped), within BRIDGE_CACHE_MS on others. */
  async revoke(tenantId: string, id: string): Promise<void> {
    const outcome = await this.#store.revokeEnrollment(tenantId, id, new Date(this.#clock.now()).toISOString());
    // Another tenant's id answers like a missing one. Revoking twice changes nothing.
    if (outcome === 'missing') throw notFound('bridge', id);
  }

  /** An exchange request from the broker: the reply to publish on the nonce's reply topic. */
  async exchange(nonce: string, payload: Uint8Array): Promise<ExchangeResult> {
    const now = this.#clock.now();
    const refuse = (outcome: ExchangeResult['outcome'], error: EnrollRefusal): ExchangeResult => ({ reply: enrollRefusal(error, now), outcome });
    const request = parseEnrollRequest(payload);
    if (!request.ok) return refuse('bad_request', 'bad_request');
    const row = await this.#store.enrollmentByLookup(request.lookup);
    // A wrong proof answers like an unknown token: nothing tells a guesser which lookups exist.
    if (!row || !verifyEnrollProof(row.token_hash, { nonce, ...request })) return refuse('unknown_token', 'unknown_token');
    if (row.revoked_at) return refuse('revoked', 'revoked');
    if (row.verified_at) return refuse('token_used', 'token_used');
    // Sealed first with a throwaway secret: a public key X25519 refuses (a low-order point)
    // is the request's fault, answered bad_request, and must not fail the batch it came in.
    try {
      sealEnrollReply({ tokenHashHex: row.token_hash, nonce, bridgePub: request.pub, tenant: row.tenant_id, bridgeId: row.id, secret: randomBytes(32), now });
    } catch {
      return refuse('bad_request', 'bad_request');
    }
    const stored = await this.#store.enrollmentSecret(row.id, randomBytes(32).toString('base64url'), request.ts, new Date(now).toISOString());
    // Revoked or spent between the read and the write: answered as the row now stands.
    if (stored === null) return refuse('token_used', 'token_used');
    const reply = sealEnrollReply({ tokenHashHex: row.token_hash, nonce, bridgePub: request.pub, tenant: row.tenant_id, bridgeId: row.id, secret: Buffer.from(stored, 'base64url'), now });
    return { reply, outcome: 'exchanged', bridgeId: row.id };
  }
}
