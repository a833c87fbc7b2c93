// The simulated air that simulated RNodes share, in-process. A frame one radio sends arrives,
// when its time on air is over, at every other radio on the channel that is switched on and
// tuned alike (same frequency, bandwidth and spreading factor: LoRa receivers with other
// settings do not demodulate it). Each arrival carries an RSSI and SNR from linkQuality().

export interface AirTuning {
  frequency_hz: number;
  bandwidth_hz: number;
  sf: number;
}

export interface AirReception {
  rssi_dbm: number;
  snr_db: number;
}

/** What the channel needs from a radio on it (RNodeSimulator implements it). */
export interface ChannelMember {
  readonly name: string;
  /** Null while the radio is off. */
  tuning(): AirTuning | null;
  /** A frame was heard: payload when the tuning matches, null for busy air only. */
  hear(payload: Uint8Array | null, airtimeMs: number, reception: AirReception): void;
}

export type LinkQuality = (from: string, to: string) => AirReception;

export interface RNodeChannelOptions {
  /** RSSI and SNR of a frame from one radio at another; default plausible seeded values. */
  linkQuality?: LinkQuality;
  seed?: number;
}

export class RNodeChannel {
  readonly #members = new Set<ChannelMember>();
  readonly #linkQuality: LinkQuality;
  delivered = 0;

  constructor(options: RNodeChannelOptions = {}) {
    this.#linkQuality = options.linkQuality ?? plausibleLinkQuality(options.seed ?? 1);
  }

  join(member: ChannelMember): void {
    this.#members.add(member);
  }

  leave(member: ChannelMember): void {
    this.#members.delete(member);
  }

  get size(): number {
    return this.#members.size;
  }

  /** Called by a radio when its transmission has ended. */
  transmitted(sender: ChannelMember, tuning: AirTuning, payload: Uint8Array, airtimeMs: number): void {
    for (const member of this.#members) {
      if (member === sender) continue;
      const theirs = member.tuning();
      if (!theirs) continue;
      const reception = this.#linkQuality(sender.name, member.name);
      const same = theirs.frequency_hz === tuning.frequency_hz && theirs.bandwidth_hz === tuning.bandwidth_hz && theirs.sf === tuning.sf;
      // Same frequency but other settings: the air is busy, nothing is decoded.
      if (same) this.delivered++;
      if (same || theirs.frequency_hz === tuning.frequency_hz) member.hear(same ? payload : null, airtimeMs, reception);
    }
  }
}

/** Signal figures a field link produces: RSSI −110…−60 dBm, SNR rising with it and kept
 *  within what LoRa demodulates (−12…+12 dB), rounded to the firmware's resolution. */
export function plausibleLinkQuality(seed: number): LinkQuality {
  let state = seed >>> 0 || 1;
  const next = () => {
    // xorshift32: small and seeded, so a run can be repeated.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  return () => {
    const rssi = Math.round(-110 + next() * 50);
    const snr = Math.round(Math.max(-12, Math.min(12, (rssi + 104) / 4 + (next() - 0.5) * 4)) * 4) / 4;
    return { rssi_dbm: rssi, snr_db: snr };
  };
}
