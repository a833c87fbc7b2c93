import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import type { Link } from './shared/links/link.ts';

// The one contract every device driver meets (docs/architecture.md, "Bearers"). The dispatcher hands a
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
  /** Which part of its delivery this frame is (1-based), when an outbound transform split the
   *  delivery; absent when it goes whole. A retry sends every part again. */
  part?: { index: number; count: number };
  /** Where the frame comes from, for a bearer that tells its receiver (an HTTP request carries
   *  the message, its delivery and the decision); radios ignore it. Absent in tests that build
   *  frames by hand. */
  origin?: FrameOrigin;
}

/** The message and delivery behind an outbound frame, as the dispatcher knows them. */
export interface FrameOrigin {
  /** The message's sender on its own interface (a node id, a phone number, "local"). */
  from: string;
  /** The interface the message was heard on; null for messages the API sent. */
  interfaceId: string | null;
  /** When the message was stored (ISO). */
  createdAt: string;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  /** The delivery's precedence name (override ... deferred). */
  precedence: string;
  /** The decision the message was routed by (its rule id, action and reason), when stored. */
  decision: { rule_id: string | null; action: string; reason: string } | null;
  /** The name of the interface the message was heard on (null: the API sent it). */
  interfaceName?: string | null;
  /** The sender as the node database knows it, when it is a node there: for a bearer that
   *  shows the node itself (a marker on a map named after the node, its battery). */
  node?: FrameNode;
}

/** A sender's node record, as OutboundFrame.origin carries it. */
export type FrameNode = Pick<NodeReport, 'id' | 'network' | 'long_name' | 'short_name' | 'public_key' | 'device_metrics' | 'last_heard_at'>;

/** One frame as the dispatcher would hand it to a bearer, for a driver's estimate of what
 *  sending it would take (a preview: sms/estimate.ts, iridium/estimate.ts). */
export type EstimateFrame = Pick<OutboundFrame, 'to' | 'text' | 'payload'> & { kind: string };

/** The `to` of a frame addressed to this station alone (an SMS to its SIM, an Iridium MT
 *  message to its modem): rules select it as `to: ["local"]`, as an API send is `from: "local"`. */
export const TO_THIS_STATION = 'local';

export interface InboundFrame {
  from: string;
  /** null: a broadcast (stored as "broadcast"); TO_THIS_STATION when addressed to this station. */
  to: string | null;
  channel: number | null;
  kind: FrameKind;
  text: string | null;
  payload: Uint8Array | null;
  /** Link facts of this frame: rssi_dbm, snr_db, hop counts... stored with the message. */
  meta: Record<string, unknown>;
  /** Identifies a frame a radio may repeat (Meshtastic: sender and packet id). A frame whose
   *  key was stored in the last 24 hours, before a restart too, is dropped as a duplicate. */
  dedupeKey?: string;
}

/** The mesh a node is on: one kind module's `nodeNetwork` (bearers/drivers.ts NODE_NETWORKS). */
export type NodeNetwork = string;

/** A node a mesh radio heard or reported (its node database). Fields it did not say are absent. */
export interface NodeReport {
  /** The node's address on its mesh: `!` and 8 hex digits (Meshtastic), 32 lower-case hex
   *  digits (an LXMF address), or a MeshCore public-key prefix in hex. */
  id: string;
  /** Default meshtastic. */
  network?: NodeNetwork;
  /** Meshtastic's node number; absent on other meshes. */
  num?: number;
  long_name?: string;
  short_name?: string;
  hw_model?: string;
  role?: string;
  position?: { latitude: number; longitude: number; altitude_m?: number; time?: string };
  /** `time`: when the node measured them (Telemetry.time), when it says. */
  device_metrics?: { battery_level_pct?: number; voltage_v?: number; channel_utilization_pct?: number; air_util_tx_pct?: number; uptime_s?: number; time?: string };
  snr_db?: number;
  hops_away?: number;
  via_mqtt?: boolean;
  /** The node's public key, base64 (a Meshtastic node's X25519 key from its NodeInfo): the
   *  bridge follows a node whose id changes by it. */
  public_key?: string;
  /** ISO time the radio last heard the node. */
  last_heard_at?: string;
}

export type SendResult =
  | { ok: true; meta?: Record<string, unknown> }
  /** `notSent`: nothing went out and nothing was spent (a daily budget, a busy modem): the
   *  delivery waits without spending an attempt, until `retryAtMs` (epoch ms) if given. A
   *  retryable failure may name `retryAtMs` too: the retry comes no sooner (session pacing). */
  | { ok: false; error: string; retryable: boolean; notSent?: boolean; retryAtMs?: number; reason?: BearerReason };

/**
 * What kind of condition a bearer's lastError names, for the bridge to act on without reading
 * the words: `offline` (the device is away or failed its bring-up), `budget` (a send budget is
 * spent or cannot hold a message), `signal` (waiting for enough signal), `unstored` (a received
 * message waits on the device until the bridge can store it), `device` (the device reported an
 * error and stays up), `config` (the device did not take a setting). A failed send names one
 * when it says something about the bearer rather than the frame (a message no budget can hold).
 */
export type BearerReason = 'offline' | 'budget' | 'signal' | 'unstored' | 'device' | 'config';

export interface BearerState {
  connected: boolean;
  /** Why the link is down or what last went wrong; null when healthy. */
  lastError: string | null;
  /** The kind of condition lastError names; absent or null when there is none to act on. */
  reason?: BearerReason | null;
  /** Lifecycle step (closed, opening, detecting, configuring, verifying, online, backoff). */
  phase?: string;
}

export interface BearerEvents {
  /** A frame heard. Answers false when it could not be stored (the database failed): a
   *  driver that can keep the frame on its device (an SMS on the SIM) keeps it and offers it
   *  again; true (or nothing, from test contexts) once it is stored or was a duplicate. The
   *  answer may be a promise-like: the bridge commits frames that come quickly together
   *  and answers once the frame is on disk. A driver that acts on the answer
   *  (deletes from the SIM, proves receipt) awaits it; one that does not ignores it, which
   *  does not hold up the commit (it never rejects). `watchOnly`: the driver looks at the
   *  answer only to log a loss (the device has let go of the frame already); the commit is not
   *  hurried for it, as it is for answers that acknowledge (db/transaction.ts, MAX_WAITING). */
  receive(frame: InboundFrame, options?: { watchOnly?: boolean }): boolean | void | PromiseLike<boolean>;
  state(state: BearerState): void;
  /** The time the device holds now, in milliseconds since the epoch, when it comes from a
   *  source better than a free-running clock (the Iridium or cellular network's time, a GPS
   *  fix): the bridge's clock may take it when the operator allows the kind (docs/clock.md).
   *  Optional: test contexts may leave it out. */
  time?(atMs: number): void;
  /** Nodes the radio heard or reported; kept in the bridge's node database. */
  nodes(reports: NodeReport[]): void;
}

/** Bridge-wide configuration sections a device can hold (a Meshtastic radio stores its LoRa
 *  region, owner name and module settings itself). A driver declares the ones it applies. */
export type DeviceSection = 'radio' | 'owner' | 'modules';

/**
 * The device-configuration channel (docs/architecture.md, "Device configuration"): the
 * configuration service decides what the bridge wants, the driver applies it to its device and
 * reports what the device holds. Values are the sections' JSON objects; a driver reads the
 * fields it knows and leaves the rest.
 */
export interface DeviceConfig {
  /** A section this driver declared, as configured now; null while the operator never wrote
   *  it: the device's own values then stand (a default must not overwrite a working radio). */
  desired(section: DeviceSection): Record<string, unknown> | null;
  /** Called after each committed change of a declared section (for `modules`, `part` names
   *  the module that changed); returns the unsubscribe. The bridge unsubscribes by itself when
   *  the bearer stops. */
  onChange(listener: (section: DeviceSection, value: Record<string, unknown>, part?: string) => void): () => void;
  /** What the device reports it holds (null: nothing known, e.g. the device went away). The
   *  bridge compares it with what is configured (radio warnings) and shows it. */
  report(section: DeviceSection, values: Record<string, unknown> | null): void;
}

export interface BearerContext {
  interfaceId: string;
  interfaceName: string;
  /** The interface's kind-specific settings, already validated. */
  settings: Record<string, unknown>;
  log: Logger;
  clock: Clock;
  events: BearerEvents;
  /** Opens a port value for this interface (serial, TCP, BLE, auto with the driver's probe,
   *  sim:// with the driver's simulator), claiming the device for it. Rejects with the reason. */
  openLink(device: string): Promise<Link>;
  /** Bridge-wide sections the driver applies to its device; see DeviceConfig. */
  deviceConfig: DeviceConfig;
  /** Small facts the driver keeps across restarts, for this interface (never secrets in the
   *  clear: store a digest; the one exception is a key the driver must use, a Reticulum
   *  identity, which is never logged or exported). Removed with the interface. */
  state: DriverState;
}

export interface DriverState {
  get(key: string): string | null;
  /** null removes the key. */
  set(key: string, value: string | null): void;
}

export interface Bearer {
  readonly kind: string;
  /** Largest payload in bytes one frame can carry. */
  readonly mtu: number;
  /** Sends the dispatcher may have outstanding at once (default 1). A bearer whose sends wait
   *  for an acknowledgement takes several, so one slow ack does not hold up the others. A send
   *  cancelled while outstanding (a fallback list escalated past it) no longer counts, so a
   *  bearer may be left with more than this waiting for acknowledgements. */
  readonly concurrency?: number;
  /** Longest a send may take before the dispatcher gives up on it (default 120 s): a bearer
   *  whose send waits for an acknowledgement or a status report names its own, so a slow but
   *  honest answer is not taken for a lost one and sent twice. */
  readonly maxSendMs?: number;
  /** Opens the device named by a port value. Resolves once started, connected or not:
   *  a missing device is a state, never a thrown error. */
  start(device: string): Promise<void>;
  /** Closes the device politely (radio off, leave) and releases it. */
  stop(): Promise<void>;
  /** Sends one frame; never throws. */
  send(frame: OutboundFrame): Promise<SendResult>;
  /** Counters and reported values for health and stats endpoints. */
  stats(): Record<string, unknown>;
  /** What in a write of a device section (DeviceConfig) the connected device would not take
   *  (a name longer than its firmware keeps, a module its build left out): one sentence per
   *  field, naming the limit and the firmware. Empty when all is well or no device is known
   *  yet. `part`: the module a modules write changed. The API refuses such a write. */
  deviceProblems?(section: DeviceSection, value: Record<string, unknown>, part?: string): string[];
}

export type BearerFactory = (ctx: BearerContext) => Bearer;
