// What the RNode firmware does with the frames a host hands it, as facts the driver plans by
// and the simulator reproduces (docs/protocols/rnode.md 1.10): the size of its packet queue
// on each board, the airtime it charges for one LoRa frame, and the 7.5 s bins behind its
// short- and long-term airtime figures and limits. Pure.

/** Packets and bytes the firmware's transmit queue holds (docs/protocols/rnode.md 1.10). */
export interface QueueCapacity {
  packets: number;
  bytes: number;
}

/** ATmega2560 builds hold 24 packets in 5120 bytes; every other build 200 in 6144. */
export function queueCapacity(mcu: number | undefined): QueueCapacity {
  return mcu === 0x92 ? { packets: 24, bytes: 5120 } : { packets: 200, bytes: 6144 };
}

/** Whether the firmware keeps airtime figures and enforces the airtime limits: on ESP32 and
 *  nRF52 only (docs/protocols/rnode.md 1.10). On an AVR board no STAT_CHTM ever comes, so a
 *  limit the driver waited on would hold every frame until its send timed out. */
export function keepsAirtime(mcu: number | undefined): boolean {
  return mcu !== 0x91 && mcu !== 0x92;
}

/** A frame is stored whole only if, after it, fewer than `bytes` bytes are queued and no more
 *  than `packets` packets: the firmware commits a packet at its closing FEND only while its
 *  byte count is below the queue size (docs/protocols/rnode.md 1.10). */
export function fitsWhole(cap: QueueCapacity, queued: { packets: number; bytes: number }, n: number): boolean {
  return queued.packets + 1 <= cap.packets && queued.bytes + n < cap.bytes;
}

export const AIRTIME_BIN_MS = 7_500;
export const AIRTIME_LONG_MS = 3_600_000;
export const AIRTIME_BINS = AIRTIME_LONG_MS / AIRTIME_BIN_MS;
/** The short-term figure divides the current and previous bin by two bin lengths. */
export const AIRTIME_SHORT_MS = 2 * AIRTIME_BIN_MS;
/** Bit rates above this send one queued packet per channel access; at or below it the
 *  firmware sends its whole queue back to back (docs/protocols/rnode.md 1.10). */
export const GUARD_THRESHOLD_BPS = 14_000;

export interface FirmwareRadio {
  sf: number;
  bandwidthHz: number;
  cr: number;
}

/** The firmware's whole-number bit rate for the settings. */
export function firmwareBitrate(r: FirmwareRadio): number {
  return Math.trunc(r.sf * ((4 / r.cr) / (2 ** r.sf / (r.bandwidthHz / 1000))) * 1000);
}

/** Preamble the firmware configures: 24 ms worth of symbols (6 ms above 30 kbps), at least 18. */
export function firmwarePreambleSymbols(r: FirmwareRadio): number {
  const tSym = 2 ** r.sf / (r.bandwidthHz / 1000);
  const targetMs = firmwareBitrate(r) > 30_000 ? 6 : 24;
  const symbols = targetMs / tSym;
  return symbols < 18 ? 18 : Math.ceil(symbols);
}

/** The airtime the firmware charges for one LoRa frame of `written` bytes (its header byte
 *  included): its own formula, without the rounding up of the datasheet's, SF 7 and above. */
export function firmwareFrameCostMs(written: number, r: FirmwareRadio): number {
  const tSym = 2 ** r.sf / (r.bandwidthHz / 1000);
  const ldro = Math.trunc(tSym) > 16 ? 1 : 0;
  const payload = ((8 * written + 16 - 4 * r.sf + 8 + 20) / (4 * (r.sf - 2 * ldro))) * r.cr;
  return (payload + firmwarePreambleSymbols(r) + 0.25 + 8) * tSym;
}

/** The LoRa frames the firmware makes of one host packet: the header byte plus up to 254
 *  bytes, and for a longer packet a second frame with the header and the rest. */
export function firmwareFrames(payloadBytes: number): number[] {
  return payloadBytes > 254 ? [255, payloadBytes - 254 + 1] : [payloadBytes + 1];
}

/** What one host packet adds to the firmware's airtime bins, in whole milliseconds per frame
 *  (the bins are integers, so each charge is cut to whole milliseconds). */
export function firmwarePacketCostMs(payloadBytes: number, r: FirmwareRadio): number {
  return firmwareFrames(payloadBytes).reduce((ms, w) => ms + Math.floor(firmwareFrameCostMs(w, r)), 0);
}

/** The firmware's airtime bins: 480 bins of 7.5 s of device time, a charge goes into the bin
 *  of the moment and clears the next one; the figures are recomputed only when asked. */
export class AirtimeBins {
  readonly #bins = new Uint16Array(AIRTIME_BINS);

  static bin(nowMs: number): number {
    return Math.floor((nowMs % AIRTIME_LONG_MS) / AIRTIME_BIN_MS);
  }

  charge(nowMs: number, costMs: number): void {
    const cb = AirtimeBins.bin(nowMs);
    this.#bins[cb] = Math.min(0xffff, Math.floor(this.#bins[cb] + costMs));
    this.#bins[(cb + 1) % AIRTIME_BINS] = 0;
  }

  /** Fractions 0..1: short = (current + previous bin) / 15 s; long = all bins / 3600 s. */
  figures(nowMs: number): { short: number; long: number } {
    const cb = AirtimeBins.bin(nowMs);
    const pb = (cb + AIRTIME_BINS - 1) % AIRTIME_BINS;
    this.#bins[(cb + 1) % AIRTIME_BINS] = 0;
    let sum = 0;
    for (const b of this.#bins) sum += b;
    return { short: (this.#bins[cb] + this.#bins[pb]) / AIRTIME_SHORT_MS, long: sum / AIRTIME_LONG_MS };
  }
}

/** STAT_CHTM carries a figure as percent × 100 cut to a whole number. */
export function reportedPercent(fraction: number): number {
  return Math.floor(fraction * 10_000) / 100;
}
