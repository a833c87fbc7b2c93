import type { Clock } from '../../../lib/clock.ts';
import type { LoRaConfig } from '../codec/messages.ts';
import type { FirmwareLine, FirmwareProfile } from './firmware.ts';
import type { NodeKeys } from './identity.ts';
import type { MeshtasticMesh, RoutingErrorName } from './mesh.ts';

// What a simulated Meshtastic device is made with (device.ts): its options, the faults tests
// inject, the counters it keeps, and the firmware constants it answers with.

/** mesh.proto HardwareModel.PORTDUINO: what the Linux-native firmware reports. */
export const HW_MODEL_PORTDUINO = 37;
/** PhoneAPI special nonces (docs 2.7): leave out other nodes / send only node infos. */
export const NONCE_NO_NODES = 69420;
export const NONCE_ONLY_NODES = 69421;
/** PhoneAPI: ToRadio packet ids remembered per connection to drop repeats (docs 2.7). */
export const RECENT_IDS = 20;
/** Firmware ErrorCode ERRNO_DISABLED, the QueueStatus.res of a packet not sent because
 *  transmit is disabled or the region is UNSET (?). */
export const ERRNO_DISABLED = 34;

/** What sendGarbage() writes by default: a debug line and bytes that are no frame. */
export const STREAM_GARBAGE = Uint8Array.from([
  ...new TextEncoder().encode('\x1b[34mDEBUG\x1b[0m | ??:??:?? 12 [Router] garbage from the simulator\r\n'),
  0x94, 0x41, // a START1 that starts nothing
  0x94, 0xc3, 0xff, 0xff, // a header announcing more than 512 bytes
  ...Array.from({ length: 40 }, (_, i) => ((i * 73 + 11) & 0xff) === 0x94 ? 0x95 : (i * 73 + 11) & 0xff),
  0x0a,
]);

export interface MeshtasticFaults {
  /** Answer everything but config_complete_id (packets for the host then never flow). */
  neverCompleteHandshake: boolean;
  /** Direct want_ack packets get this error_reason instead of NONE. */
  refuseAcks: RoutingErrorName | null;
  /** Time from transmission to the destination's ack. */
  ackDelayMs: number;
  /** Stop answering: host frames are ignored, nothing is written, nothing is heard or acked. */
  silent: boolean;
  /** Packets reach the host without the automation bit of Data.bitfield, as from a sender
   *  that does not mark its automated packets. */
  dropAutomationMark: boolean;
}

export interface MeshtasticDeviceOptions {
  /** For logs; also what the default node number is derived from. */
  name?: string;
  /** Node number; default derived from the name (stable across runs), or from the public key
   *  with `numberFromKey` (the default on firmware 2.8). */
  num?: number;
  /** The node's X25519 keys; default made from the name. Its User carries the public key when
   *  they are given, when numbered by key, and after upgrade(). */
  keys?: NodeKeys;
  /** Number the node by the CRC-32 of its public key, as firmware 2.8 does (identity.ts);
   *  default: as the firmware line does. */
  numberFromKey?: boolean;
  longName?: string;
  shortName?: string;
  /** The air it shares; default a mesh of its own. */
  mesh?: MeshtasticMesh;
  clock?: Clock;
  /** The firmware line it behaves as (firmware.ts): '2.7' (default) or '2.8', or a profile. */
  firmware?: FirmwareLine | FirmwareProfile;
  /** DeviceMetadata.firmware_version; default the profile's. */
  firmwareVersion?: string;
  hwModel?: number;
  /** Fields over the default LoRa config (EU_868, LONG_FAST, hop_limit 3, tx on, 22 dBm). */
  lora?: Partial<LoRaConfig>;
  /** QueueStatus.maxlen (the firmware's TX queue). */
  queueMaxlen?: number;
  /** A want_ack packet nobody acknowledged ends in MAX_RETRANSMIT after this long. */
  retransmitTimeoutMs?: number;
  /** From an admin change that reboots (or commit_edit_settings) to the reboot. */
  rebootDelayMs?: number;
  /** Packets held for a host that is absent or mid-handshake (MeshService toPhoneQueue). */
  toPhoneQueue?: number;
  /** Whether the board's clock has a time (from GPS, NTP, a phone or the mesh: RTC quality
   *  FromNet or better). Without one the firmware stamps received packets rx_time 0
   *  (Router::handleReceived, getValidTime; docs/protocols/meshtastic.md). Default true. */
  hasTime?: boolean;
  faults?: Partial<MeshtasticFaults>;
}

export interface MeshtasticDeviceCounters {
  framesFromHost: number;
  badFrames: number;
  unknownToRadio: number;
  handshakes: number;
  heartbeats: number;
  disconnects: number;
  packetsFromHost: number;
  duplicateIds: number;
  tooLarge: number;
  txDisabled: number;
  transmitted: number;
  received: number;
  droppedNoChannel: number;
  toPhoneDropped: number;
  ignoredWhileSilent: number;
  reboots: number;
  /** Admin messages by variant ('set_owner', ...; 'unknown' for none this codec knows). */
  admin: Record<string, number>;
  /** Admin messages the firmware would fail to decode or cannot act on, ignored silently. */
  adminIgnored: number;
}
