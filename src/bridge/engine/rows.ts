import type { NodeNetwork, NodeReport } from '../../bearers/bearer.ts';
import type { DriverInterface } from '../../bearers/driver-module.ts';

// The engine's vocabulary of rows and states: what its stores read and write, and what the
// resource folders' views shape for the outside world (docs/data-model.md).

export const DELIVERY_STATES = ['pending', 'held', 'sending', 'retrying', 'delivered', 'dead', 'cancelled', 'expired'] as const;

/** States in which a delivery is still waiting to go (the queue, including what is held). */
export const WAITING_STATES = ['pending', 'held', 'retrying'] as const;

/** A TTL that never runs out: an SOS, or a TTL paused while the delivery is held. */
export const NEVER_MS = 8_640_000_000_000_000;

export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface DeliveryRow {
  id: string;
  message_id: string;
  interface_id: string;
  to: string;
  channel: number | null;
  kind: 'text' | 'position' | 'telemetry' | 'data';
  text: string | null;
  payload: Uint8Array | null;
  from: string;
  state: DeliveryState;
  /** 0 override ... 4 routine ... 5 deferred (precedence.ts). */
  precedence: number;
  attempts: number;
  max_attempts: number;
  next_attempt_ms: number;
  front_ms: number | null;
  expires_ms: number;
  /** The TTL left when the delivery was held with its TTL paused (expires_ms is NEVER_MS then). */
  held_ttl_ms?: number | null;
  /** Held until this mesh node is heard again (a direct message to a node that is away). */
  until_heard?: string | null;
  /** The fallback list this delivery belongs to, and its position in it. */
  fallback_id?: string | null;
  fallback_pos?: number | null;
  last_error: string | null;
  /** What the bearer said of a delivered send (SendResult.meta), else null. */
  result?: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface MessageRow {
  id: string;
  direction: 'inbound' | 'outbound';
  interface_id: string | null;
  from: string;
  to: string;
  channel: number | null;
  kind: 'text' | 'position' | 'telemetry' | 'data';
  text: string | null;
  payload: Uint8Array | null;
  size: number;
  rule_id: string | null;
  action: string | null;
  /** Why the message went where it went; precedence: what its deliveries were given. */
  decision: { rule_id: string | null; action: string; reason: string; precedence?: string } | null;
  meta: Record<string, unknown>;
  created_at: string;
}

export interface InterfaceRow extends DriverInterface {
  transforms: { inbound: unknown[]; outbound: unknown[] };
  retry: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface NodeRow {
  node_id: string;
  network: NodeNetwork;
  num: number | null;
  interface_id: string;
  long_name: string | null;
  short_name: string | null;
  hw_model: string | null;
  role: string | null;
  position: NonNullable<NodeReport['position']> | null;
  device_metrics: NonNullable<NodeReport['device_metrics']> | null;
  snr_db: number | null;
  hops_away: number | null;
  via_mqtt: boolean;
  last_heard_at: string | null;
  updated_at: string;
  public_key: string | null;
}

export type FallbackStrategy = 'ordered' | 'first_available' | 'all';

export type FallbackState = 'active' | 'delivered' | 'exhausted' | 'cancelled';

export interface FallbackMemberRow {
  interface_id: string;
  /** The interface's name when the list was made (for the story told about it). */
  interface: string;
  /** The resolved address; null when the member could not be addressed (the reason in `unusable`). */
  to: string | null;
  ack_within_s: number;
  unusable?: string;
}

export interface TraceEntry {
  at: string;
  member: number;
  interface: string;
  event: 'started' | 'skipped' | 'escalated' | 'failed' | 'delivered' | 'late' | 'superseded' | 'exhausted' | 'cancelled';
  detail?: string;
}

export interface FallbackRow {
  id: string;
  message_id: string;
  strategy: FallbackStrategy;
  keep_trying: boolean;
  members: FallbackMemberRow[];
  /** The member started last. */
  position: number;
  /** An ordered list's: when the current member's acknowledgement is due (set when it became
   *  the active member); null otherwise, and for the last member kept past its deadline. */
  deadline_ms: number | null;
  state: FallbackState;
  trace: TraceEntry[];
  outcome: string | null;
  precedence: number;
  /** TTL of the deliveries it starts; null: never expire. */
  ttl_ms: number | null;
  created_at: string;
  updated_at: string;
}
