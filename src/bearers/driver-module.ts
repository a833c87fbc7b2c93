import type { ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import type { Route } from '../http/route.ts';
import type { Clock } from '../lib/clock.ts';
import { jsonDepth } from '../lib/json.ts';
import type { BearerFactory, DeviceSection, DriverState, EstimateFrame } from './bearer.ts';
import type { DeliveryEstimate, EstimateSources, UsageUnit } from './estimate.ts';
import type { BleFraming } from './shared/links/ble-framing.ts';
import type { Link } from './shared/links/link.ts';
import type { SerialPortEntry } from './shared/links/list-ports.ts';
import type { Probe } from './shared/links/open-link.ts';

// What one interface kind brings to the bridge (docs/architecture.md, "Adding a driver"). Each
// bearers/<kind>/index.ts exports one DriverModule; bearers/drivers.ts lists them, and every
// kind list in the bridge (the API's kind enum, contact address fields, `fieldbridge sim`, the
// stats endpoint) is derived from that list. A module without `create` is a kind that can be
// configured but has no driver in this release: binding it reports "no driver".

/** `fieldbridge sim <kind>`: a byte-level simulator of the device, run by hand. */
export interface SimulatorCommand {
  /** Usage lines, starting with `fieldbridge sim <kind>`. */
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Returns the exit code (0 after a clean stop, 2 after a usage error it wrote). */
  run(values: SimValues, options: SimRunOptions): Promise<number>;
}

export type SimValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface SimRunOptions {
  /** Stops the simulators (tests); without it SIGINT/SIGTERM do. */
  signal?: AbortSignal;
  write?: (line: string) => void;
  /** Called once every device is listening, with the port values to give the bridge. */
  onReady?: (devices: string[]) => void;
}

/** The fields of an interface a driver's own routes may read. */
export interface DriverInterface {
  id: string;
  name: string;
  kind: string;
  enabled: boolean;
  device: string | null;
  settings: Record<string, unknown>;
}

/** What the bridge lends a driver's extra routes: its interfaces, their link state and stats. */
export interface DriverApi {
  /** Interfaces of this kind. */
  list(): DriverInterface[];
  /** One interface of this kind by id or name; 404 problem when there is none. */
  get(ref: string): DriverInterface;
  /** Replaces the interface's settings (validated against the module's schema); the bearer restarts. */
  replaceSettings(ref: string, settings: Record<string, unknown>): Promise<DriverInterface>;
  link(id: string): { connected: boolean; phase: string; last_error: string | null };
  /** The running bearer's stats(), {} when none runs. */
  stats(id: string): Record<string, unknown>;
  /** What the driver keeps for the interface (BearerContext.state), read and written by its
   *  routes whether a bearer runs or not (a kind's own credentials, kept as digests). */
  state(id: string): DriverState;
  /** The bridge's clock (epoch ms), for the times the routes store. */
  now(): number;
  /** Serial ports, then bonded BLE boards offering a service some kind speaks; probes nothing. */
  listPorts(): Promise<SerialPortEntry[]>;
}

/** A driver's reported values: their schema (documented in the OpenAPI document) and how a
 *  bearer's stats() and the interface's settings become them. */
export interface StatsView<T extends Record<string, unknown> = Record<string, unknown>> {
  schema: z.ZodType<T>;
  /** `raw`: the running bearer's stats() ({} when none runs); `state`: what the driver keeps
   *  across restarts (BearerContext.state), readable while the interface is stopped too. */
  read(raw: Record<string, unknown>, settings: Record<string, unknown>, state?: Pick<DriverState, 'get'>, clock?: Clock): T;
}

/** Which contact address a destination `@contact` uses on this kind (docs/api.md, "Contacts").
 *  Kinds that share an address family (Meshtastic and sim both use mesh node ids) name the same
 *  field; the first module to give the field a schema defines it. */
export interface ContactAddress {
  field: string;
  schema?: z.ZodType<string>;
  description?: string;
}

export interface DriverModule<K extends string = string> {
  kind: K;
  /** The kind as people write it ("RNode", "Meshtastic"), for messages. */
  title: string;
  settings: z.ZodType<Record<string, unknown>>;
  /** Settings fields that are secrets (a SIM PIN): shown and exported as "<redacted>", never
   *  logged; writing the marker back keeps the stored value. */
  secretSettings?: readonly string[];
  contact: ContactAddress;
  /** simulate-mesh-rx may inject on interfaces of this kind (they carry mesh traffic). */
  meshTraffic?: boolean;
  create?: BearerFactory;
  /** Recognises the device behind a freshly opened link, for the `auto` port value. */
  probe?: Probe;
  /** How the driver's bytes travel over ble:// (shared/links/ble-framing.ts; default: the byte
   *  stream over Nordic UART). */
  bleFraming?: BleFraming;
  /** The port of a tcp://host value that names none (default 7633, the RNode's). */
  tcpPort?: number;
  /** Serial speed for this kind's devices (default 115200), or read from an interface's
   *  settings (an Iridium modem's `baud`). */
  baudRate?: number | ((settings: Record<string, unknown>) => number);
  /** The device keeps a frame the bridge could not store yet and offers it again (an SMS stays
   *  on the SIM, an Iridium message in the modem's MT buffer): while the database is locked by another
   *  process, its frames are refused rather than held in memory (router/held-frames.ts). */
  keepsUnstoredFrames?: boolean;
  /** The sender of a heard frame will not send it again: the radio acknowledged it over the air
   *  (or no one is told of a loss) before the bridge had it. Each such frame is committed as soon
   *  as it is stored, never left in an open group for a window (router/held-frames.ts). */
  framesNotRepeated?: boolean;
  /** The driver tells the time its device holds (BearerEvents.time): what that time is, for the
   *  operator choosing `bridge.clock.radio_time` (docs/clock.md). */
  tellsTime?: string;
  /** Opens sim://<channel>: a simulated device in this process. */
  openSim?: (channel: string) => Promise<Link>;
  simulator?: SimulatorCommand;
  stats?: StatsView;
  /** What sending these frames would take, measured by the driver's own codec and budget (the
   *  preview, and the usage of a delivered delivery). Without it the frames are measured against
   *  the running bearer's MTU, or `idleMtu` (bearers/estimate.ts measureByMtu). */
  estimate?(frames: readonly EstimateFrame[], src: EstimateSources): DeliveryEstimate;
  /** The MTU an interface of this kind has while no bearer runs, from its settings. */
  idleMtu?(settings: Record<string, unknown>): number;
  /** The unit this kind is billed in: its estimate's cost, and what usage counts per day. */
  usageUnit?: UsageUnit;
  /** Bridge-wide sections the driver applies to its device (BearerContext.deviceConfig). */
  deviceSections?: readonly DeviceSection[];
  /** The mesh whose nodes this kind reports (NodeReport.network), if it keeps a node table:
   *  the node database's `network` and the nodes API's filter list these. */
  nodeNetwork?: string;
  /** An interface the first start of a fresh database creates from environment variables
   *  (bridge/interfaces/seed.ts): null when the variables ask for none, an error line (naming
   *  the variable) that stops the start. */
  seed?(env: NodeJS.ProcessEnv): InterfaceSeed | { error: string } | null;
  /** Extra routes the kind serves (the RNode's routes (docs/api.md 4.8)). */
  routes?(api: DriverApi): Route[];
}

/** What DriverModule.seed asks the first start to create. */
export interface InterfaceSeed {
  name: string;
  device: string;
  settings: Record<string, unknown>;
  /** The variables it came from, for the log line of a later start that ignores them. */
  variables: string;
}

/** Keeps the kind's literal type, so the kind list is a union of literals. */
export function defineDriver<const K extends string>(module: DriverModule<K>): DriverModule<K> {
  return module;
}

/** How deeply the settings of a kind without a schema of its own may nest. */
export const MAX_UNSPECIFIED_SETTINGS_DEPTH = 8;

/** Settings of a kind whose driver is not in this release yet: stored as given, but bounded:
 *  a JSON object nesting at most MAX_UNSPECIFIED_SETTINGS_DEPTH levels, so no
 *  stored value can make the export, the diff or JSON.stringify walk without end. Every kind
 *  this release lists has a strict schema of its own; this serves modules written for tests. */
export const unspecifiedSettings = z
  .record(z.string(), z.unknown())
  .refine((value) => jsonDepth(value, MAX_UNSPECIFIED_SETTINGS_DEPTH) <= MAX_UNSPECIFIED_SETTINGS_DEPTH, {
    error: `settings may nest arrays and objects at most ${MAX_UNSPECIFIED_SETTINGS_DEPTH} levels deep`,
  })
  .describe(`Settings of a kind whose driver is not in this release yet: stored as given, nesting at most ${MAX_UNSPECIFIED_SETTINGS_DEPTH} levels`);
