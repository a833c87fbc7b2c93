import { z } from 'zod';
import { DRIVERS, TIME_TELLING_KINDS } from '../../bearers/drivers.ts';
import { enrollmentTokenLookup } from '../../hubwire/credentials.ts';
import { REDACTION_MARKER } from './secrets.ts';
import { maskUrlsIn } from '../../lib/mask-url.ts';
import { parseMqttUrl } from '../../hubwire/mqtt-options.ts';
import { TOPIC_SEGMENT } from '../../hubwire/topics.ts';

// The bridge configuration sections (docs/api.md 2.6, 4.4; docs/design.md section 6). One zod schema per
// section: it validates writes, fills defaults for anything never written, and documents the
// API through the routes. Every field has a default, so an empty database reads as a working
// configuration and `{}` parses to the defaults. No transforms (docs/design.md section 2).
// Radio and module field names follow Meshtastic's Config.LoRaConfig and ModuleConfig
// messages (meshtastic/protobufs config.proto, module_config.proto) so the mesh driver can map
// them one to one; `beacon` is ours.

const MAX_SECONDS = 2_147_483_647;
const seconds = (fallback: number, what: string) =>
  z.number().int().min(0).max(MAX_SECONDS).default(fallback).describe(`${what} (seconds)`);
const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const CONTROL = /[\u0000-\u001f\u007f]/;

function isIanaTimezone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const BridgeSettings = z.strictObject({
  name: z.string().min(1).max(64).refine((s) => !CONTROL.test(s), 'must not contain control characters').default('fieldbridge')
    .describe('What this bridge calls itself in logs, the hub and exports'),
  timezone: z.string().min(1).refine(isIanaTimezone, 'must be an IANA time zone name such as "Europe/Berlin" or "UTC"').default('UTC')
    .describe('IANA time zone for schedules that name none and for local times in logs'),
  // The audit log is bounded by age and by rows (audit/store.ts, audit/retention.ts).
  audit: z.strictObject({
    retention_days: z.number().int().min(0).max(36_500).default(90)
      .describe('Audit entries older than this many days are deleted by the daily retention run; 0 = no age limit (max_rows still applies)'),
    max_rows: z.number().int().min(100).max(10_000_000).default(100_000)
      .describe('Most audit entries kept; the oldest are deleted as new ones are written'),
  }).prefault({}),
  // What a power cut may cost (docs/decisions.md, "Issue 22: a write path made for flash" and
  // "Issue 30: time and durability"): full by default, so an acknowledgement means on the card.
  storage: z.strictObject({
    sync: z.enum(['normal', 'full']).default('full')
      .describe('full (default): every commit waits for the disk (an fsync each; a group of messages is one commit), so a power cut or a card turning read-only loses nothing acknowledged; normal: a power cut may lose the last commits (never an application crash, never the file)'),
  }).prefault({}),
  // GET /api/events (docs/events.md): the replay log and the live streams are bounded.
  events: z.strictObject({
    log_max_events: z.number().int().min(0).max(1_000_000).default(10_000)
      .describe('Most recent events kept (in memory, saved when the bridge stops) for clients that reconnect with Last-Event-ID, the oldest going first; 0 = no replay'),
    log_max_kib: z.number().int().min(16).max(65_536).default(2_048)
      .describe('Most KiB of recent events kept for replay (a large message makes a large event), the oldest going first'),
    log_max_hours: z.number().int().min(1).max(8_760).default(168)
      .describe('Events older than this many hours are not kept for replay'),
    max_streams: z.number().int().min(1).max(10_000).default(256)
      .describe('Most clients following /api/events at once; one more is answered 503'),
    max_buffered_kib: z.number().int().min(16).max(65_536).default(1_024)
      .describe('A client that leaves this many KiB unread is told why and cut off, so a slow reader cannot cost the bridge memory'),
    heartbeat_s: z.number().int().min(1).max(300).default(15)
      .describe('An idle stream gets a comment line this often, so proxies keep it open'),
  }).prefault({}),
  // Alerts as messages (docs/alerts.md): each source is off until given a threshold.
  alerts: z.strictObject({
    interface_offline_s: z.number().int().min(1).max(604_800).nullable().default(null)
      .describe('Alert when an enabled interface has been offline this many seconds (and again, cleared, when it is back); null = off'),
    node_silent_min: z.number().int().min(1).max(43_200).nullable().default(null)
      .describe('Alert when a mesh node the bridge heard has not been heard for this many minutes; null = off'),
    battery_below_pct: z.number().int().min(1).max(100).nullable().default(null)
      .describe('Alert when a node heard in the last hour reports its battery below this percentage; null = off'),
    dead_letters: z.boolean().default(false)
      .describe('Alert when a delivery on an interface dead-letters (cleared when that interface delivers again)'),
    uplink_down_min: z.number().int().min(1).max(10_080).nullable().default(null)
      .describe('Alert when the hub uplink has not been connected for this many minutes; null = off'),
    disk_free_below_mb: z.number().int().min(1).max(1_000_000).nullable().default(null)
      .describe('Alert when the file system holding the database has less than this many MB free; null = off'),
    max_per_hour: z.number().int().min(1).max(1_000).default(12)
      .describe('Most alert messages (raised and cleared) in any hour; more are dropped, logged and counted, so a flapping radio cannot run up an SMS bill'),
  }).prefault({}),
  // A gateway whose only time source is its radios (docs/decisions.md, "a clock a
  // Raspberry Pi cannot trust").
  clock: z.strictObject({
    radio_time: z.array(z.enum(TIME_TELLING_KINDS)).max(TIME_TELLING_KINDS.length).refine((l) => new Set(l).size === l.length, 'must not repeat a kind').default([])
      .describe(`Interface kinds whose device time the bridge may take when it is ahead of its own (never backwards): ${DRIVERS.flatMap((d) => ('tellsTime' in d && d.tellsTime ? [`"${d.kind}": ${d.tellsTime}`] : [])).join('; ')}. Empty: only the system clock`),
  }).prefault({}),
});

export const RoutingSettings = z.strictObject({
  default_action: z.enum(['store', 'drop']).default('store')
    .describe('What happens to a message no enabled access rule matches (docs/design.md section 6)'),
  rate_limit: z.strictObject({
    sends_per_minute: z.number().int().min(0).max(60_000).default(120)
      .describe('Messages the API may put into the router per minute (POST /api/messages/send and send-to-contact); 0 = no limit'),
    burst: z.number().int().min(1).max(10_000).default(20)
      .describe('Messages accepted at once above the steady rate before 429 answers begin (token bucket size)'),
  }).prefault({}),
});

// Hub identifiers become MQTT topic levels (fieldbridge/v1/<tenant>/<bridge_id>/<kind>,
// docs/design.md section 8): no '/', and no '+' or '#' wildcards.
const TopicLevel = z.string().regex(TOPIC_SEGMENT, 'must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit (it becomes an MQTT topic level)');

/** Why a broker URL is refused for the bridge's uplink, or null when it is fine. */
export function brokerUrlProblem(url: string): string | null {
  try {
    const endpoint = parseMqttUrl(url);
    if (endpoint.username !== undefined || endpoint.password !== undefined) return 'must not carry user:password@; put them in username and password (the password is kept secret)';
    return null;
  } catch (error) {
    // parseMqttUrl quotes the URL with its user information masked (lib/mask-url.ts); masked
    // again here in case its wording ever changes, since this message reaches logs and answers.
    return maskUrlsIn((error as Error).message);
  }
}

export const HubSettings = z.strictObject({
  enabled: z.boolean().default(false).describe('Send this bridge\'s events to a hub over MQTT'),
  // Credentials go in username/password, never in the URL: the URL is shown to viewers, put in
  // exports and logs, and only `password` is a redacted secret.
  mqtt_url: z.string().max(2048).superRefine((url, ctx) => {
    const problem = brokerUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }).nullable().default(null)
    .describe('Broker address, mqtt://host[:port] or mqtts://host[:port] (default ports 1883, 8883); no user:password@ (use username and password)'),
  tenant: TopicLevel.nullable().default(null).describe('Tenant id the hub issued; not needed with an enrollment token (the hub names the tenant)'),
  bridge_id: TopicLevel.nullable().default(null).describe('This bridge\'s id at the hub; null: a stable id made at first start'),
  username: z.string().min(1).max(256).nullable().default(null).describe('MQTT user name'),
  password: z.string().min(1).max(1024).nullable().default(null)
    .describe('MQTT password. A secret: reads show "<redacted>"; writing "<redacted>" back (or leaving it out) keeps the stored one, ' +
      'unless the same write moves mqtt_url to another broker (host, port, or from mqtts to mqtt): then it is cleared unless given again'),
  // Traded once over MQTT for this bridge's id and secret (src/hubwire/credentials.ts).
  // Reads carry the redaction marker in its place (secrets.ts), so the schema of answers takes it.
  enrollment_token: z.string().refine((t) => t === REDACTION_MARKER || enrollmentTokenLookup(t) !== null, 'must be an enrollment token as the hub gave it (fbe_...)').nullable().default(null)
    .describe('One-time enrollment token from the hub (POST /api/bridges). A secret: reads show "<redacted>". The bridge trades it once for its tenant, bridge id and signing secret, kept in its database; a different token makes a new exchange'),
  // The outbox keeps what the hub has not acknowledged, up to this size.
  outbox_max_mb: z.number().int().min(1).max(4096).default(64)
    .describe('Largest size of the uplink outbox (events the hub has not acknowledged yet) in MiB; when full, the oldest telemetry and position events are dropped first, then new events are refused (never routing)'),
}).superRefine((hub, ctx) => {
  if (!hub.enabled) return;
  // tenant is not required: an enrolled bridge has its tenant from the hub, in its database,
  // which this check cannot see (the uplink says so in its log when it has none at all).
  if (hub.mqtt_url === null) ctx.addIssue({ code: 'custom', path: ['mqtt_url'], message: 'is required when the hub uplink is enabled' });
});

// Meshtastic Config.LoRaConfig.RegionCode names (config.proto), UNSET = 0 ... BR_902 = 26.
export const REGION_CODES = [
  'UNSET', 'US', 'EU_433', 'EU_868', 'CN', 'JP', 'ANZ', 'KR', 'TW', 'RU', 'IN', 'NZ_865', 'TH', 'LORA_24',
  'UA_433', 'UA_868', 'MY_433', 'MY_919', 'SG_923', 'PH_433', 'PH_868', 'PH_915', 'ANZ_433', 'KZ_433', 'KZ_863',
  'NP_865', 'BR_902',
] as const;
// Meshtastic Config.LoRaConfig.ModemPreset names (config.proto) LONG_FAST = 0 ... SHORT_TURBO = 8,
// without VERY_LONG_SLOW (2), which the firmware deprecated.
export const MODEM_PRESETS = [
  'LONG_FAST', 'LONG_SLOW', 'MEDIUM_SLOW', 'MEDIUM_FAST', 'SHORT_SLOW', 'SHORT_FAST', 'LONG_MODERATE', 'SHORT_TURBO',
] as const;

export const RadioSettings = z.strictObject({
  region: z.enum(REGION_CODES).default('UNSET')
    .describe('Regulatory region (Meshtastic RegionCode); a radio with UNSET does not transmit'),
  modem_preset: z.enum(MODEM_PRESETS).default('LONG_FAST')
    .describe('LoRa modem preset; every node of a mesh must use the same one'),
  channel_num: z.number().int().min(0).max(10_000).default(0)
    .describe('Frequency slot; 0 = derived from the primary channel name, like every stock node'),
  hop_limit: z.number().int().min(0).max(7).default(3)
    .describe('Hops a message we send may take; 0 = direct neighbours only (Meshtastic allows at most 7)'),
  tx_power: z.number().int().min(0).max(30).default(0)
    .describe('Transmit power in dBm; 0 = the region\'s legal maximum as the firmware knows it'),
});

// User.long_name and User.short_name (mesh.proto): at most 39 and 4 UTF-8 bytes.
export const OWNER_LONG_NAME_BYTES = 39;
export const OWNER_SHORT_NAME_BYTES = 4;
export const OwnerSettings = z.strictObject({
  long_name: z.string().min(1)
    .refine((s) => utf8Bytes(s) <= OWNER_LONG_NAME_BYTES, `must be at most ${OWNER_LONG_NAME_BYTES} bytes of UTF-8`)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters')
    .default('fieldbridge').describe(`The name other nodes show for this device (at most ${OWNER_LONG_NAME_BYTES} UTF-8 bytes)`),
  short_name: z.string().min(1)
    .refine((s) => utf8Bytes(s) <= OWNER_SHORT_NAME_BYTES, `must be at most ${OWNER_SHORT_NAME_BYTES} bytes of UTF-8`)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters')
    .default('FB').describe(`The short tag shown on small screens (at most ${OWNER_SHORT_NAME_BYTES} UTF-8 bytes; one emoji is 4)`),
});

const TelemetryModule = z.strictObject({
  device_update_interval: seconds(1800, 'How often the device metrics (battery, channel use) are broadcast'),
  device_telemetry_enabled: z.boolean().default(false)
    .describe('Broadcast the device metrics to the mesh at all (Meshtastic 2.8 made it opt-in: an upgraded board has it off; docs/meshtastic.md)'),
  environment_measurement_enabled: z.boolean().default(false).describe('Read and broadcast attached environment sensors'),
  environment_update_interval: seconds(1800, 'How often environment readings are broadcast'),
});

const PositionModule = z.strictObject({
  position_broadcast_secs: seconds(900, 'Longest time between position broadcasts'),
  position_broadcast_smart_enabled: z.boolean().default(true).describe('Broadcast sooner when the device has moved'),
  fixed_position: z.boolean().default(false).describe('The device stays put: send the stored position instead of GPS fixes'),
  gps_update_interval: seconds(120, 'How often the GPS is asked for a fix'),
  position_precision: z.number().int().min(0).max(32).nullable().default(null)
    .describe('Bits of the position shared on the primary channel: 0 none (Meshtastic 2.8\'s default on a public channel), 13 about 1.5 km, 32 exact; null leaves the board\'s setting (docs/meshtastic.md)'),
});

const StoreForwardModule = z.strictObject({
  enabled: z.boolean().default(false),
  is_server: z.boolean().default(false).describe('Keep messages for nodes that were away and replay them on request'),
  heartbeat: z.boolean().default(false).describe('Announce the server periodically'),
  records: z.number().int().min(0).max(100_000).default(0).describe('Messages kept; 0 = as many as memory allows'),
  history_return_max: z.number().int().min(0).max(10_000).default(25).describe('Most messages replayed per request'),
  history_return_window: z.number().int().min(0).max(10_080).default(240).describe('How far back a replay reaches, in minutes'),
});

const RangeTestModule = z.strictObject({
  enabled: z.boolean().default(false),
  sender: seconds(0, 'Interval between test messages; 0 = only receive'),
  save: z.boolean().default(false).describe('Keep received test messages on the device'),
});

const NeighborInfoModule = z.strictObject({
  enabled: z.boolean().default(false),
  update_interval: seconds(14_400, 'How often the list of heard neighbours is sent'),
  transmit_over_lora: z.boolean().default(false).describe('Send it over the air, not only to connected clients'),
});

// Meshtastic keeps canned messages as one '|'-separated string of at most 200 bytes.
const CANNED_TOTAL_BYTES = 200;
const CannedMessageModule = z.strictObject({
  enabled: z.boolean().default(false),
  send_bell: z.boolean().default(false).describe('Ring the bell character with each message'),
  messages: z.array(z.string().min(1).refine((s) => !s.includes('|'), 'must not contain "|" (the device separates messages with it)'))
    .max(50)
    .refine((list) => utf8Bytes(list.join('|')) <= CANNED_TOTAL_BYTES, `together, joined by "|", must be at most ${CANNED_TOTAL_BYTES} bytes`)
    .default([]).describe('Preset texts the device offers'),
});

const BeaconModule = z.strictObject({
  enabled: z.boolean().default(false),
  interval: z.number().int().min(60).max(MAX_SECONDS).default(3600).describe('Time between beacons, in seconds (at least 60)'),
  text: z.string().max(200).refine((s) => utf8Bytes(s) <= 200, 'must be at most 200 bytes of UTF-8').default('')
    .describe('What the beacon says, e.g. a station identification'),
  channel: z.number().int().min(0).max(7).default(0).describe('Mesh channel index it is sent on'),
}).superRefine((b, ctx) => {
  if (b.enabled && b.text === '') ctx.addIssue({ code: 'custom', path: ['text'], message: 'is required when the beacon is enabled' });
});

export const MODULE_SCHEMAS = {
  telemetry: TelemetryModule,
  position: PositionModule,
  store_forward: StoreForwardModule,
  range_test: RangeTestModule,
  neighbor_info: NeighborInfoModule,
  canned_message: CannedMessageModule,
  beacon: BeaconModule,
} as const;
export type ModuleName = keyof typeof MODULE_SCHEMAS;
export const MODULE_NAMES = Object.keys(MODULE_SCHEMAS) as ModuleName[];

export const ModulesSettings = z.strictObject({
  telemetry: TelemetryModule.prefault({}),
  position: PositionModule.prefault({}),
  store_forward: StoreForwardModule.prefault({}),
  range_test: RangeTestModule.prefault({}),
  neighbor_info: NeighborInfoModule.prefault({}),
  canned_message: CannedMessageModule.prefault({}),
  beacon: BeaconModule.prefault({}),
});

export const SECTION_SCHEMAS = {
  bridge: BridgeSettings,
  routing: RoutingSettings,
  hub: HubSettings,
  radio: RadioSettings,
  owner: OwnerSettings,
  modules: ModulesSettings,
} as const;
export type SectionName = keyof typeof SECTION_SCHEMAS;
export const SECTION_NAMES = Object.keys(SECTION_SCHEMAS) as SectionName[];

/** Every section: the configuration part of an export (the lead's export adds interfaces etc.). */
export const ConfigSections = z.strictObject({
  bridge: BridgeSettings.prefault({}),
  routing: RoutingSettings.prefault({}),
  hub: HubSettings.prefault({}),
  radio: RadioSettings.prefault({}),
  owner: OwnerSettings.prefault({}),
  modules: ModulesSettings.prefault({}),
});

export type ConfigValues = z.output<typeof ConfigSections>;
export type SectionValue<S extends SectionName> = ConfigValues[S];
export type RadioValues = ConfigValues['radio'];

/** Sections written through POST /api/config/module besides the modules themselves. */
export const MODULE_ENDPOINT_SECTIONS = ['bridge', 'routing', 'hub'] as const;
/** What POST /api/config/module addresses, and what a change event names. */
export type ChangeTarget = ModuleName | Exclude<SectionName, 'modules'>;

export function isSectionName(name: string): name is SectionName {
  return Object.hasOwn(SECTION_SCHEMAS, name);
}
export function isModuleName(name: string): name is ModuleName {
  return Object.hasOwn(MODULE_SCHEMAS, name);
}

export function defaultSection<S extends SectionName>(name: S): SectionValue<S> {
  return SECTION_SCHEMAS[name].parse({}) as SectionValue<S>;
}

export { redactSecrets, restoreSecrets, SECRET_FIELDS, REDACTION_MARKER } from './secrets.ts';
