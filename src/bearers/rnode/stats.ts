import type { ChannelStats } from './protocol.ts';
import { bitrateBps, type RnodeSettings } from './radio.ts';

// The values an RNode interface reports (docs/api.md 2.7 "Reported values"): what the radio itself
// echoed and sent (STAT_CHTM, STAT_RSSI/SNR), never just what was asked for. Units are in
// the names; null until the radio has said.

export interface Reported extends Partial<ChannelStats> {
  frequency_hz?: number;
  bandwidth_hz?: number;
  tx_power_dbm?: number;
  sf?: number;
  cr?: number;
  radio_on?: boolean;
  st_alock_pct?: number;
  lt_alock_pct?: number;
  firmware?: string;
  platform?: string;
  mcu?: string;
  board?: number;
  temperature_c?: number;
  last_rssi_dbm?: number;
  last_snr_db?: number;
}

export function reportedStats(r: Reported, s: RnodeSettings): Record<string, unknown> {
  const sf = r.sf ?? s.sf;
  const bw = r.bandwidth_hz ?? s.bandwidth_hz;
  const cr = r.cr ?? s.cr;
  return {
    frequency_hz: r.frequency_hz ?? null,
    bandwidth_hz: r.bandwidth_hz ?? null,
    sf: r.sf ?? null,
    cr: r.cr ?? null,
    tx_power_dbm: r.tx_power_dbm ?? null,
    radio_on: r.radio_on ?? false,
    st_alock_pct: r.st_alock_pct ?? null,
    lt_alock_pct: r.lt_alock_pct ?? null,
    last_rssi_dbm: r.last_rssi_dbm ?? null,
    last_snr_db: r.last_snr_db ?? null,
    airtime_short_pct: r.airtime_short_pct ?? null,
    airtime_long_pct: r.airtime_long_pct ?? null,
    channel_load_short_pct: r.channel_load_short_pct ?? null,
    channel_load_long_pct: r.channel_load_long_pct ?? null,
    current_rssi_dbm: r.current_rssi_dbm ?? null,
    noise_floor_dbm: r.noise_floor_dbm ?? null,
    interference_dbm: r.interference_dbm ?? null,
    // Reticulum's derived rate (docs/protocols/rnode.md 1.7), from what the radio reports (the settings
    // until it has), used for the announce budget.
    bitrate_bps: bitrateBps(sf, bw, cr),
    firmware_version: r.firmware ?? null,
    platform: r.platform ?? null,
    mcu: r.mcu ?? null,
    temperature_c: r.temperature_c ?? null,
  };
}
