// Meshtastic enum tables: the names the protobuf definitions use, with their numbers
// (docs/protocols/meshtastic.md 2.4, 2.5; meshtastic/protobufs at v2.7.26 and later). Enum
// fields decode to plain numbers, so a value newer than these tables survives a round trip;
// nameOf() turns a number into a name for logs and the API.

export type EnumTable = Readonly<Record<string, number>>;

/** The name of `value` in `table`, or `UNKNOWN_<value>` for a number the table lacks. */
export function nameOf(table: EnumTable, value: number): string {
  for (const [name, n] of Object.entries(table)) if (n === value) return name;
  return `UNKNOWN_${value}`;
}

/** The number of `name` in `table`, or undefined. */
export function valueOf(table: EnumTable, name: string): number | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

// portnums.proto PortNum. 0-63 core, 64-127 registered third-party apps, 256-511 private.
export const PORT_NUM = {
  UNKNOWN_APP: 0,
  TEXT_MESSAGE_APP: 1, // payload: UTF-8 text
  REMOTE_HARDWARE_APP: 2,
  POSITION_APP: 3, // payload: Position
  NODEINFO_APP: 4, // payload: User
  ROUTING_APP: 5, // payload: Routing
  ADMIN_APP: 6, // payload: AdminMessage
  TEXT_MESSAGE_COMPRESSED_APP: 7,
  WAYPOINT_APP: 8,
  AUDIO_APP: 9,
  DETECTION_SENSOR_APP: 10,
  ALERT_APP: 11,
  KEY_VERIFICATION_APP: 12,
  REMOTE_SHELL_APP: 13,
  REPLY_APP: 32,
  IP_TUNNEL_APP: 33,
  PAXCOUNTER_APP: 34,
  STORE_FORWARD_PLUSPLUS_APP: 35,
  NODE_STATUS_APP: 36,
  MESH_BEACON_APP: 37,
  SERIAL_APP: 64,
  STORE_FORWARD_APP: 65,
  RANGE_TEST_APP: 66,
  TELEMETRY_APP: 67, // payload: Telemetry
  ZPS_APP: 68,
  SIMULATOR_APP: 69,
  TRACEROUTE_APP: 70, // payload: RouteDiscovery
  NEIGHBORINFO_APP: 71,
  ATAK_PLUGIN: 72,
  MAP_REPORT_APP: 73,
  POWERSTRESS_APP: 74,
  LORAWAN_BRIDGE: 75,
  RETICULUM_TUNNEL_APP: 76,
  CAYENNE_APP: 77,
  ATAK_PLUGIN_V2: 78,
  LORA_OTA_APP: 79,
  GROUPALARM_APP: 112,
  PRIVATE_APP: 256,
  ATAK_FORWARDER: 257,
  MAX: 511,
} as const;

const KNOWN_PORTS = new Set<number>(Object.values(PORT_NUM));

/** True for a port number in PORT_NUM. Callers count packets on other ports (docs/style.md
 *  habit 3) instead of guessing at their payload. */
export function isKnownPort(port: number): boolean {
  return KNOWN_PORTS.has(port);
}

export function portName(port: number): string {
  return nameOf(PORT_NUM, port);
}

// mesh.proto Routing.Error: the answer to want_ack (docs/protocols/meshtastic.md 2.5).
export const ROUTING_ERROR = {
  NONE: 0, // delivered (for a broadcast: a neighbour was heard repeating it)
  NO_ROUTE: 1,
  GOT_NAK: 2,
  TIMEOUT: 3,
  NO_INTERFACE: 4,
  MAX_RETRANSMIT: 5,
  NO_CHANNEL: 6,
  TOO_LARGE: 7,
  NO_RESPONSE: 8,
  DUTY_CYCLE_LIMIT: 9,
  BAD_REQUEST: 32,
  NOT_AUTHORIZED: 33,
  PKI_FAILED: 34,
  PKI_UNKNOWN_PUBKEY: 35,
  ADMIN_BAD_SESSION_KEY: 36,
  ADMIN_PUBLIC_KEY_UNAUTHORIZED: 37,
  RATE_LIMIT_EXCEEDED: 38,
  PKI_SEND_FAIL_PUBLIC_KEY: 39,
} as const;

// config.proto Config.LoRaConfig.RegionCode. UA_868 (15) is deprecated in the proto.
export const REGION_CODE = {
  UNSET: 0, // the radio does not transmit
  US: 1,
  EU_433: 2,
  EU_868: 3,
  CN: 4,
  JP: 5,
  ANZ: 6,
  KR: 7,
  TW: 8,
  RU: 9,
  IN: 10,
  NZ_865: 11,
  TH: 12,
  LORA_24: 13,
  UA_433: 14,
  UA_868: 15,
  MY_433: 16,
  MY_919: 17,
  SG_923: 18,
  PH_433: 19,
  PH_868: 20,
  PH_915: 21,
  ANZ_433: 22,
  KZ_433: 23,
  KZ_863: 24,
  NP_865: 25,
  BR_902: 26,
  ITU1_2M: 27,
  ITU2_2M: 28,
  EU_866: 29,
  EU_874: 30,
  EU_917: 31,
  EU_N_868: 32,
  ITU3_2M: 33,
  ITU1_70CM: 34,
  ITU2_70CM: 35,
  ITU3_70CM: 36,
  ITU2_125CM: 37,
} as const;

// config.proto Config.LoRaConfig.ModemPreset. LONG_SLOW (1) and VERY_LONG_SLOW (2) are
// deprecated in the proto.
export const MODEM_PRESET = {
  LONG_FAST: 0,
  LONG_SLOW: 1,
  VERY_LONG_SLOW: 2,
  MEDIUM_SLOW: 3,
  MEDIUM_FAST: 4,
  SHORT_SLOW: 5,
  SHORT_FAST: 6,
  LONG_MODERATE: 7,
  SHORT_TURBO: 8,
  LONG_TURBO: 9,
  LITE_FAST: 10,
  LITE_SLOW: 11,
  NARROW_FAST: 12,
  NARROW_SLOW: 13,
  TINY_FAST: 14,
  TINY_SLOW: 15,
  MEDIUM_TURBO: 16,
} as const;

// config.proto Config.LoRaConfig.FEM_LNA_Mode.
export const FEM_LNA_MODE = { DISABLED: 0, ENABLED: 1, NOT_PRESENT: 2 } as const;

// config.proto Config.DeviceConfig.Role (used by User.role and DeviceMetadata.role).
// ROUTER_CLIENT (3) and REPEATER (4) are deprecated in the proto.
export const DEVICE_ROLE = {
  CLIENT: 0,
  CLIENT_MUTE: 1,
  ROUTER: 2,
  ROUTER_CLIENT: 3,
  REPEATER: 4,
  TRACKER: 5,
  SENSOR: 6,
  TAK: 7,
  CLIENT_HIDDEN: 8,
  LOST_AND_FOUND: 9,
  TAK_TRACKER: 10,
  ROUTER_LATE: 11,
  CLIENT_BASE: 12,
} as const;

// channel.proto Channel.Role.
export const CHANNEL_ROLE = { DISABLED: 0, PRIMARY: 1, SECONDARY: 2 } as const;

// mesh.proto MeshPacket.Priority.
export const PRIORITY = {
  UNSET: 0,
  MIN: 1,
  BACKGROUND: 10,
  DEFAULT: 64,
  RELIABLE: 70,
  RESPONSE: 80,
  HIGH: 100,
  ALERT: 110,
  ACK: 120,
  MAX: 127,
} as const;

// mesh.proto MeshPacket.TransportMechanism.
export const TRANSPORT_MECHANISM = {
  TRANSPORT_INTERNAL: 0,
  TRANSPORT_LORA: 1,
  TRANSPORT_LORA_ALT1: 2,
  TRANSPORT_LORA_ALT2: 3,
  TRANSPORT_LORA_ALT3: 4,
  TRANSPORT_MQTT: 5,
  TRANSPORT_MULTICAST_UDP: 6,
  TRANSPORT_API: 7,
  TRANSPORT_UNICAST_UDP: 8,
} as const;

// mesh.proto LogRecord.Level.
export const LOG_LEVEL = { UNSET: 0, TRACE: 5, DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40, CRITICAL: 50 } as const;

// admin.proto AdminMessage.ConfigType: the argument of get_config_request. The numbers are
// one less than the Config oneof field numbers.
export const CONFIG_TYPE = {
  DEVICE_CONFIG: 0,
  POSITION_CONFIG: 1,
  POWER_CONFIG: 2,
  NETWORK_CONFIG: 3,
  DISPLAY_CONFIG: 4,
  LORA_CONFIG: 5,
  BLUETOOTH_CONFIG: 6,
  SECURITY_CONFIG: 7,
  SESSIONKEY_CONFIG: 8,
  DEVICEUI_CONFIG: 9,
} as const;

// admin.proto AdminMessage.ModuleConfigType: the argument of get_module_config_request. The
// numbers are one less than the ModuleConfig oneof field numbers.
export const MODULE_CONFIG_TYPE = {
  MQTT_CONFIG: 0,
  SERIAL_CONFIG: 1,
  EXTNOTIF_CONFIG: 2,
  STOREFORWARD_CONFIG: 3,
  RANGETEST_CONFIG: 4,
  TELEMETRY_CONFIG: 5,
  CANNEDMSG_CONFIG: 6,
  AUDIO_CONFIG: 7,
  REMOTEHARDWARE_CONFIG: 8,
  NEIGHBORINFO_CONFIG: 9,
  AMBIENTLIGHTING_CONFIG: 10,
  DETECTIONSENSOR_CONFIG: 11,
  PAXCOUNTER_CONFIG: 12,
  STATUSMESSAGE_CONFIG: 13,
  TRAFFICMANAGEMENT_CONFIG: 14,
  TAK_CONFIG: 15,
  MESHBEACON_CONFIG: 16,
} as const;

/** Data.bitfield flags (mesh.proto Data.bitfield = 9; docs/protocols/meshtastic.md 2.9).
 *  Bits 0 and 1 are the firmware's (Router.h BITFIELD_OK_TO_MQTT_SHIFT 0,
 *  BITFIELD_WANT_RESPONSE_SHIFT 1); bit 2 marks a packet an automated sender made, as
 *  MeshMonitor and other bots set it (no protobuf or firmware constant names it yet). */
export const BITFIELD = {
  OK_TO_MQTT: 1 << 0,
  WANT_RESPONSE: 1 << 1,
  IS_AUTOMATION: 1 << 2,
} as const;
