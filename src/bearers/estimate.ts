import type { Clock } from '../lib/clock.ts';
import type { DriverState, EstimateFrame } from './bearer.ts';

// What a kind answers when asked what sending would take, without sending: the preview
// (POST /api/messages/preview) shows it, and the usage count (GET /api/messages/stats, /metrics)
// counts a delivered delivery in its billing unit with it. A kind that bills (DriverModule
// `estimate`) measures frames with its own codec and checks its own budget; every other kind's
// frames are measured against its MTU (measureByMtu).

export interface FrameEstimate {
  bytes: number;
  fits: boolean;
  error: string | null;
  /** The encoding the driver would choose (a text codec's: gsm7, ucs2 or 8bit). */
  encoding?: string | null;
  /** Parts this frame takes, for a kind that splits a frame into billed parts. */
  parts?: number | null;
  /** Credits this frame's session costs, for a kind that bills sessions in credits. */
  credits?: number;
}

export interface DeliveryEstimate {
  /** The address the bearer would send to (normalised the way the driver does). */
  address: string;
  /** Largest frame in bytes; null when unknown (a kind without an estimate whose bearer is not running). */
  mtu: number | null;
  frames: FrameEstimate[];
  budget: { allows: boolean; reason: string | null };
  /** What it would spend in the kind's billing unit (DriverModule `usageUnit`); null for a kind without one. */
  cost: { unit: string; amount: number } | null;
}

export interface EstimateSources {
  settings: Record<string, unknown>;
  /** The interface's stats view now (docs/api.md 2.2 `reported`); {} when none is known. */
  stats: Record<string, unknown>;
  /** The driver's stored state (a credit ledger), read only. */
  state: Pick<DriverState, 'get'>;
  /** The running bearer's MTU, when one runs. */
  runningMtu: number | undefined;
  clock: Clock;
}

/** A kind's billing unit: the name usage is counted under, and its /metrics counter. */
export interface UsageUnit {
  unit: string;
  metric: { name: string; help: string };
}

/** Frames of a kind that does not bill, measured against the MTU (null: unknown, every frame fits). */
export function measureByMtu(frames: readonly EstimateFrame[], mtu: number | null): DeliveryEstimate {
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
