import { z } from 'zod';
import { reportedNumber as n, reportedText as s, counted as count } from '../shared/stats-fields.ts';
import type { StatsView } from '../driver-module.ts';

// What a meshcore interface reports (GET /api/interfaces/{id}/stats): the radio's facts as
// the session start read them (SELF_INFO, DEVICE_INFO), and what the driver counted. Null
// until the radio said.


const MeshCoreStats = z.object({
  public_key: s('The radio\'s public key (64 hex digits)'),
  address: s('The radio\'s address: the first 6 bytes of its public key in hex'),
  name: s('The advert name the radio reported'),
  model: s('Board model (DEVICE_INFO)'),
  firmware_version: s('Firmware version (DEVICE_INFO)'),
  firmware_build: s('Firmware build date (DEVICE_INFO)'),
  protocol_version: n('FIRMWARE_VER_CODE the radio reported'),
  max_contacts: n('Contacts the radio can hold'),
  max_channels: n('Channel slots the radio has (1, 8 or 40 depending on the board)'),
  radio_freq_mhz: n('LoRa frequency, MHz'),
  radio_bw_khz: n('LoRa bandwidth, kHz'),
  radio_sf: n('LoRa spreading factor'),
  radio_cr: n('LoRa coding rate'),
  tx_power_dbm: n('Transmit power, dBm'),
  contacts: count('Contacts read from the radio'),
  awaiting_ack: count('Direct messages sent and waiting for their ack'),
  flood_scope: s('The interface\'s flood scope (region) as set: a region name, `*` for none, null to keep the radio\'s'),
  flood_scope_support: s('How the radio takes a flood scope: `default` (its default scope, firmware 1.15+), `session` (until it restarts, 1.10-1.14) or `none`'),
  radio_flood_scope: s('The default flood scope the radio reported after the session start (firmware 1.15+), or null for none'),
  radio_flood_scope_key: s('Its transport key (32 hex digits)'),
  flood_scope_problem: s('Why the interface\'s flood scope is not in force, or null'),
  received: count('Messages taken off the radio'),
  sent_direct: count('Direct messages the radio accepted'),
  sent_channel: count('Channel messages and datagrams the radio accepted'),
  acked: count('Direct messages confirmed by their ack'),
  failed: count('Send attempts that failed'),
  failed_by_reason: z.record(z.string(), z.number().int()).describe('Failed attempts by error code (ERR_MESHCORE_NO_ACK, ...)'),
  ack_timeouts: count('Direct messages whose ack did not come in time'),
  path_resets: count('Paths reset to flood before a last attempt'),
  command_timeouts: count('Commands the radio did not answer in time (each reopened the link)'),
  undecodable: count('Frames too short for their code'),
  unknown_codes: count('Frames with a code this driver does not know'),
  oversize_frames: count('Frame headers dropped for a bad length'),
});

type MeshCoreStats = z.infer<typeof MeshCoreStats>;

export const meshcoreStats: StatsView<MeshCoreStats> = {
  schema: MeshCoreStats,
  read: (raw) => {
    const num = (k: string) => (typeof raw[k] === 'number' ? (raw[k] as number) : null);
    const str = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : null);
    const int = (k: string) => num(k) ?? 0;
    return {
      public_key: str('public_key'), address: str('address'), name: str('name'), model: str('model'), firmware_version: str('firmware_version'),
      firmware_build: str('firmware_build'), protocol_version: num('protocol_version'), max_contacts: num('max_contacts'), max_channels: num('max_channels'),
      radio_freq_mhz: num('radio_freq_mhz'), radio_bw_khz: num('radio_bw_khz'), radio_sf: num('radio_sf'), radio_cr: num('radio_cr'),
      tx_power_dbm: num('tx_power_dbm'), contacts: int('contacts'), awaiting_ack: int('awaiting_ack'), flood_scope: str('flood_scope'),
      flood_scope_support: str('flood_scope_support'), radio_flood_scope: str('radio_flood_scope'), radio_flood_scope_key: str('radio_flood_scope_key'),
      flood_scope_problem: str('flood_scope_problem'), received: int('received'),
      sent_direct: int('sent_direct'), sent_channel: int('sent_channel'), acked: int('acked'), failed: int('failed'),
      failed_by_reason: (raw.failed_by_reason as Record<string, number> | undefined) ?? {}, ack_timeouts: int('ack_timeouts'),
      path_resets: int('path_resets'), command_timeouts: int('command_timeouts'), undecodable: int('undecodable'),
      unknown_codes: int('unknown_codes'), oversize_frames: int('oversize_frames'),
    };
  },
};
