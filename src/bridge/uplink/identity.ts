import type { KeyObject } from 'node:crypto';
import { hashKey } from '../../auth/secrets.ts';
import { signingKey, signPayload } from '../../hubwire/credentials.ts';
import { type UplinkKind, uplinkTopic } from '../../hubwire/topics.ts';
import type { UplinkConfig } from './config.ts';
import type { StoredCredentials } from './outbox.ts';

// Who the bridge publishes as: a tenant, a bridge id and, once enrolled, the secret everything
// it publishes is signed with (hubwire/credentials.ts). Without a token and stored credentials
// it publishes unsigned under hub.tenant and its bridge id, which a hub takes only with
// HUB_ACCEPT_UNENROLLED=1.

export interface Credentials {
  tenant: string;
  bridgeId: string;
  secret?: KeyObject;
}

/** Which credentials the bridge publishes with: stored ones, or none yet (enroll), or the
 *  configuration's tenant and id, unsigned (a bridge that was never given a token). Stored
 *  credentials are used whether or not the token stays in the configuration; a different
 *  token makes a new exchange. */
export function pickIdentity(config: UplinkConfig, stored: StoredCredentials | null): Credentials | 'enroll' {
  const token = config.enrollment_token ?? null;
  if (stored && (token === null || stored.token_sha256 === hashKey(token))) return { tenant: stored.tenant, bridgeId: stored.bridge_id, secret: signingKey(Buffer.from(stored.secret, 'base64url')) };
  if (token !== null) return 'enroll';
  return { tenant: config.tenant, bridgeId: config.bridge_id };
}

/** The identity in use; tenant and bridge id are empty while the bridge must still enroll. */
export class UplinkIdentity {
  #tenant = '';
  #bridgeId = '';
  #secret: KeyObject | undefined;

  get tenant(): string {
    return this.#tenant;
  }

  get bridgeId(): string {
    return this.#bridgeId;
  }

  /** The signing secret, once enrolled. */
  get secret(): KeyObject | undefined {
    return this.#secret;
  }

  get enrolled(): boolean {
    return this.#secret !== undefined;
  }

  use(credentials: Credentials): void {
    this.#tenant = credentials.tenant;
    this.#bridgeId = credentials.bridgeId;
    this.#secret = credentials.secret;
  }

  topic(kind: UplinkKind): string {
    return uplinkTopic(this.#tenant, this.#bridgeId, kind);
  }

  /** The payload as published: signed with the secret once enrolled. */
  seal(topic: string, json: string): string {
    return this.#secret ? signPayload(this.#secret, topic, json) : json;
  }
}
