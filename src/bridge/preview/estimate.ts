import type { EstimateFrame } from '../../bearers/bearer.ts';
import { driverFor } from '../../bearers/drivers.ts';
import { type DeliveryEstimate, type EstimateSources, measureByMtu } from '../../bearers/estimate.ts';

// What one delivery would put on the air: the frames after the outbound transforms, measured by
// the kind's own estimate where it has one (a kind that bills by its units: DriverModule
// `estimate`), else against the bearer's MTU. The estimates never send, spend or store anything.

export type { DeliveryEstimate, EstimateSources, FrameEstimate } from '../../bearers/estimate.ts';
export type Frame = EstimateFrame;

export function estimateDelivery(kind: string, frames: Frame[], src: EstimateSources): DeliveryEstimate {
  const module = driverFor(kind);
  if (module?.estimate) return module.estimate(frames, src);
  return measureByMtu(frames, src.runningMtu ?? module?.idleMtu?.(src.settings) ?? null);
}
