import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';

// The one contract every device driver meets (DESIGN.md section 7). The dispatcher hands a
// bearer one outbound frame at a time and gets back a verdict; the bearer reports what it
// hears and how its link is through the events it was given. Nothing in bearers/ imports
// bridge/: a bearer knows frames and devices, not rules, messages or databases.

export type FrameKind = 'text' | 'position' | 'telemetry' | 'data';

export interface OutboundFrame {
  deliveryId: string;
  messageId: string;
  /** Destination address on this bearer (a node id, a phone number, "broadcast", ...). */
  to: string;
  channel: number | null;
  kind: FrameKind;
  /** UTF-8 text when the message is text, else null. */
  text: string | null;
  /** The bytes to put on the air: the encoded text or the raw payload. */
  payload: Uint8Array;
}

export interface InboundFrame {
  from: string;
  to: string | null;
  channel: number | null;
  kind: FrameKind;
  text: string | null;
  payload: Uint8Array | null;
  /** Link facts of this frame: rssi_dbm, snr_db, hop counts... stored with the message. */
  meta: Record<string, unknown>;
}

export type SendResult =
  | { ok: true; meta?: Record<string, unknown> }
  | { ok: false; error: string; retryable: boolean };

export interface BearerState {
  connected: boolean;
  /** Why the link is down or what last went wrong; null when healthy. */
  lastError: string | null;
  /** Lifecycle step (closed, opening, detecting, configuring, verifying, online, backoff). */
  phase?: string;
}

export interface BearerEvents {
  receive(frame: InboundFrame): void;
  state(state: BearerState): void;
}

export interface BearerContext {
  interfaceId: string;
  interfaceName: string;
  /** The interface's kind-specific settings, already validated. */
  settings: Record<string, unknown>;
  log: Logger;
  clock: Clock;
  events: BearerEvents;
}

export interface Bearer {
  readonly kind: string;
  /** Largest payload in bytes one frame can carry. */
  readonly mtu: number;
  /** Opens the device named by a port value. Resolves once started, connected or not:
   *  a missing device is a state, never a thrown error. */
  start(device: string): Promise<void>;
  /** Closes the device politely (radio off, leave) and releases it. */
  stop(): Promise<void>;
  /** Sends one frame; never throws. */
  send(frame: OutboundFrame): Promise<SendResult>;
  /** Counters and reported values for health and stats endpoints. */
  stats(): Record<string, unknown>;
}

export type BearerFactory = (ctx: BearerContext) => Bearer;
