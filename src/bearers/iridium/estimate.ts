import type { EstimateFrame } from '../bearer.ts';
import type { DeliveryEstimate, EstimateSources, UsageUnit } from '../estimate.ts';
import { CreditLedger } from './credits.ts';
import { rockblockPrefix, SBD_MAX_MO_BYTES, sessionCredits } from './sbd.ts';
import { IridiumSettings } from './settings.ts';

// What sending would take on an iridium interface, without sending (a preview): the
// same MO payload (a RockBLOCK destination's 9-byte prefix), the same credits per started
// 50 bytes (sbd.ts sessionCredits) and the same credit ledger check (credits.ts allows) the
// driver makes before a session.

/** Iridium is billed by the credit (one per started 50 bytes of a session): usage and the
 *  preview's cost count credits. */
export const IRIDIUM_CREDITS: UsageUnit = {
  unit: 'iridium_credits',
  metric: { name: 'fieldbridge_iridium_credits_total', help: 'Iridium credits of delivered deliveries (one per started 50 bytes), by interface.' },
};

export interface IridiumEstimate extends DeliveryEstimate {
  mtu: number;
  frames: Array<{ bytes: number; fits: boolean; error: string | null; credits: number }>;
}

/** `state`: the interface's stored driver state (the credit ledger), read only. */
export function iridiumEstimate(frames: readonly EstimateFrame[], src: Pick<EstimateSources, 'settings' | 'state' | 'clock'>): IridiumEstimate {
  const parsed = IridiumSettings.safeParse(src.settings);
  const settings = parsed.success ? parsed.data : IridiumSettings.parse({});
  const to = (frames[0]?.to ?? '').trim();
  const prefix = to === 'gateway' ? new Uint8Array(0) : rockblockPrefix(to);
  const mtu = SBD_MAX_MO_BYTES - (prefix?.length ?? 0);
  const out = frames.map((frame) => {
    const bytes = frame.payload.length + (prefix?.length ?? 0);
    const credits = sessionCredits(bytes);
    // The same checks and words as driver.ts #moPayload.
    if (!prefix) return { bytes, credits, fits: false, error: `ERR_IRIDIUM_ADDRESS: ${JSON.stringify(to)} is no Iridium destination: use "gateway" or "RB" and a RockBLOCK serial number` };
    if (frame.payload.length === 0) return { bytes, credits, fits: false, error: 'ERR_IRIDIUM_EMPTY: an SBD message carries 1 to 340 bytes; this one is empty' };
    if (bytes > SBD_MAX_MO_BYTES) return { bytes, credits, fits: false, error: `ERR_IRIDIUM_TOO_LONG: ${frame.payload.length} bytes, but one SBD message carries at most ${mtu}` };
    return { bytes, credits, fits: true, error: null };
  });
  const credits = out.reduce((n, f) => n + f.credits, 0);
  const ledger = new CreditLedger(src.clock, src.state, { perDay: settings.credits_per_day, perMonth: settings.credits_per_month });
  const check = ledger.everFits(credits) ? ledger.allows(credits) : { ok: false as const, reason: `${credits} credits are more than the budget allows in a day or a month` };
  const budget = check.ok ? { allows: true, reason: null } : { allows: false, reason: `ERR_IRIDIUM_BUDGET: ${check.reason}` };
  return { address: to, mtu, frames: out, budget, cost: { unit: IRIDIUM_CREDITS.unit, amount: credits } };
}
