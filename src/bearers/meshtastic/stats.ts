import { z } from 'zod';
import { reportedNumber as n, reportedText as s, counted as count } from '../shared/stats-fields.ts';
import type { StatsView } from '../driver-module.ts';
import { allowedPresets, boardOf, excludedModuleNames } from './board.ts';
import { formatNodeId, MODEM_PRESET, nameOf, REGION_CODE } from './codec/messages.ts';
import type { DeviceState } from './handshake.ts';

// What a meshtastic interface reports (GET /api/interfaces/{id}/stats; docs/meshtastic.md,
// "Stats and health"): the device as its handshake described it, its own air time, its queue,
// and what the driver counted. Null until the device said.


const MeshtasticStats = z.object({
  firmware_version: s('Firmware version the device reported'),
  firmware_line: s('Its major.minor ("2.7", "2.8"): what the driver expects of the board follows it'),
  excluded_modules: z.array(z.string()).describe('Modules the board\'s firmware was built without (DeviceMetadata.excluded_modules, by their protobuf names); settings for them are refused'),
  long_name_max_bytes: n('Longest owner long name the board keeps, in UTF-8 bytes (24 from 2.8, 39 before)'),
  module_configs: z.array(z.string()).describe('The module configurations the board listed in its handshake (2.8 adds statusmessage, traffic_management, tak, mesh_beacon)'),
  region_presets: z.array(z.string()).nullable().describe('Modem presets the board allows in its region (2.8 handshake); null when it sent none'),
  node_id: s('The own node id (!a1b2c3d4)'),
  long_name: s('Owner long name the device reported'),
  short_name: s('Owner short name the device reported'),
  region: s('LoRa region the device reported'),
  modem_preset: s('LoRa modem preset the device reported'),
  channel_utilization_pct: n('Air time the own node hears in use (last minute), percent'),
  air_util_tx_pct: n('Air time the own node transmitted (last hour), percent'),
  queue_free: n('Packets the device can still queue (its last QueueStatus)'),
  queue_max: n('Size of the device\'s transmit queue'),
  awaiting_ack: count('Packets sent and waiting for their acknowledgement'),
  config_error: s('Settings the device did not take after a push, or null'),
  board_time: z.object({ time: z.iso.datetime(), read_at: z.iso.datetime() }).nullable()
    .describe('The board\'s time as last told to the bridge (rx_time of a packet heard live) and when (the bridge\'s clock); null while none; docs/clock.md'),
  received: count('Packets received and stored (before duplicates are dropped)'),
  sent: count('Packets written to the device'),
  acked: count('Packets acknowledged (direct: by the destination; broadcast: a neighbour repeated it)'),
  failed: count('Send attempts that failed'),
  failed_by_reason: z.record(z.string(), z.number().int()).describe('Failed attempts by error code (ERR_MESHTASTIC_NO_ROUTE, ...)'),
  undecodable: count('Frames that were no valid FromRadio'),
  unknown_ports: count('Packets with a port number this release does not know (stored as data)'),
  encrypted: count('Packets the device could not decrypt (counted, not stored)'),
  replayed: count('Records a 2.8 board replayed from its node database (node table only, never routed)'),
  debug_lines: count('Lines of debug text the device printed'),
  oversize_frames: count('Frame headers announcing more than 512 bytes (skipped)'),
  config_pushes: count('Times the bridge pushed settings to the device'),
  reboots: count('Reboots the device announced'),
});

const ZERO = {
  firmware_version: null, firmware_line: null, excluded_modules: [], long_name_max_bytes: null, module_configs: [], region_presets: null, node_id: null, long_name: null, short_name: null, region: null, modem_preset: null,
  channel_utilization_pct: null, air_util_tx_pct: null, queue_free: null, queue_max: null, awaiting_ack: 0, config_error: null, board_time: null,
  received: 0, sent: 0, acked: 0, failed: 0, failed_by_reason: {}, undecodable: 0, unknown_ports: 0, encrypted: 0, replayed: 0,
  debug_lines: 0, oversize_frames: 0, config_pushes: 0, reboots: 0,
};

export const meshtasticStats: StatsView<z.infer<typeof MeshtasticStats>> = {
  schema: MeshtasticStats,
  // Zeros and nulls while no bearer runs; the driver's own fields otherwise (strip the rest).
  read: (raw) => MeshtasticStats.parse({ ...ZERO, ...Object.fromEntries(Object.entries(raw).filter(([k]) => k in ZERO)) }),
};

/** The device as its handshake described it, for stats(); nulls until it did. */
export function deviceView(d: DeviceState | null): Record<string, unknown> {
  const board = d ? boardOf(d.metadata, d.regionPresets) : null;
  return {
    firmware_version: d?.metadata?.firmware_version ?? null,
    firmware_line: board?.line ?? null,
    excluded_modules: board ? excludedModuleNames(board) : [],
    long_name_max_bytes: board?.longNameBytes ?? null,
    module_configs: d?.moduleConfigs ?? [],
    region_presets: board && d?.lora ? allowedPresets(board, d.lora.region ?? 0) : null,
    node_id: d?.myInfo?.my_node_num !== undefined ? formatNodeId(d.myInfo.my_node_num) : null,
    long_name: d?.owner?.long_name ?? null,
    short_name: d?.owner?.short_name ?? null,
    region: d?.lora ? nameOf(REGION_CODE, d.lora.region ?? 0) : null,
    modem_preset: d?.lora ? nameOf(MODEM_PRESET, d.lora.modem_preset ?? 0) : null,
  };
}
