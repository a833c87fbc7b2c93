import { iridiumEstimate } from '../../bearers/iridium/index.ts';
import { smsEstimate } from '../../bearers/sms/index.ts';
import type { Clock } from '../../lib/clock.ts';

// What one delivery would put on the air, per kind: the frames after the outbound
// transforms, measured by the driver's own codec where the bearer bills by its units (SMS
// parts: bearers/sms/estimate.ts; Iridium credits: bearers/iridium/estimate.ts), else against
// the bearer's MTU. The estimates never send, spend or store anything.

export interface Frame {
  to: string;
  kind: string;
  text: string | null;
  payload: Uint8Array;
}

export interface FrameEstimate {
  bytes: number;
  fits: boolean;
  error: string | null;
  /** SMS: gsm7, ucs2 or 8bit. */
  encoding?: string | null;
  /** SMS parts this frame takes. */
  parts?: number | null;
  /** Iridium credits this frame's session costs. */
  credits?: number;
}

export interface DeliveryEstimate {
  /** The address the bearer would send to (an SMS number normalised to E.164). */
  address: string;
  /** Largest frame in bytes; null when unknown (a kind without an estimate whose bearer is not running). */
  mtu: number | null;
  frames: FrameEstimate[];
  budget: { allows: boolean; reason: string | null };
  cost: { unit: string; amount: number } | null;
}

export interface EstimateSources {
  settings: Record<string, unknown>;
  /** The interface's stats view now (docs/api.md 2.2 `reported`). */
  stats: Record<string, unknown>;
  /** The driver's stored state (Iridium's credit ledger), read only. */
  state: { get(key: string): string | null };
  /** The running bearer's MTU, when one runs. */
  runningMtu: number | undefined;
  clock: Clock;
}

/** The default MTU of a sim interface (bearers/sim settings `mtu`). */
const SIM_DEFAULT_MTU = 230;

export function estimateDelivery(kind: string, frames: Frame[], src: EstimateSources): DeliveryEstimate {
  if (kind === 'sms') {
    const e = smsEstimate(frames, src.settings, { stats: src.stats });
    return { address: e.to, mtu: e.mtu, frames: e.frames, budget: e.budget, cost: e.cost };
  }
  if (kind === 'iridium') {
    const e = iridiumEstimate(frames, src.settings, { state: src.state, clock: src.clock });
    return { address: e.to, mtu: e.mtu, frames: e.frames, budget: e.budget, cost: e.cost };
  }
  const mtu = src.runningMtu ?? (kind === 'sim' ? (typeof src.settings.mtu === 'number' ? src.settings.mtu : SIM_DEFAULT_MTU) : null);
  return {
    address: frames[0]?.to ?? '',
    mtu,
    frames: frames.map((f) => {
      const fits = mtu === null || f.payload.length <= mtu;
      return { bytes: f.payload.length, fits, error: fits ? null : `${f.payload.length} bytes, larger than the interface's MTU of ${mtu} (a split transform would send it in parts)` };
    }),
    budget: { allows: true, reason: null },
    cost: null,
  };
}
