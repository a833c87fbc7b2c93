import type { EstimateFrame } from '../bearer.ts';
import type { DeliveryEstimate, EstimateSources, UsageUnit } from '../estimate.ts';
import { LIMITS, normalizeNumber, planData, planMessage } from './codec/index.ts';
import { SmsSettings } from './settings.ts';

// What sending would take on an sms interface, without sending (a preview): the
// same address normalisation, encoding choice and part splitting the driver uses
// (driver.ts send(), codec/split.ts), and the driver's daily part budget.

/** SMS is billed by the part: usage and the preview's cost count parts. */
export const SMS_PARTS: UsageUnit = {
  unit: 'sms_parts',
  metric: { name: 'fieldbridge_sms_parts_total', help: 'SMS parts sent by delivered deliveries, by interface.' },
};

export interface SmsEstimate extends DeliveryEstimate {
  /** The address the modem would send to (E.164), or the original when it is no number. */
  address: string;
  /** Largest frame the interface takes, in bytes of data (driver.ts mtu). */
  mtu: number;
  frames: Array<{ bytes: number; fits: boolean; error: string | null; encoding: 'gsm7' | 'ucs2' | '8bit' | null; parts: number | null }>;
}

/** `stats`: what the interface reports now (its stats view; {} when no bearer runs). */
export function smsEstimate(frames: readonly EstimateFrame[], src: Pick<EstimateSources, 'settings' | 'stats'>): SmsEstimate {
  const parsed = SmsSettings.safeParse(src.settings);
  const settings = parsed.success ? parsed.data : SmsSettings.parse({});
  const mtu = settings.max_parts === 1 ? LIMITS.USER_DATA_OCTETS : settings.max_parts * 134;
  let to = frames[0]?.to ?? '';
  let addressError: string | null = null;
  const number = normalizeNumber(to, settings.default_country_code ?? undefined);
  if (number.ok) to = number.number;
  else addressError = `ERR_SMS_NUMBER: ${JSON.stringify(to)} is not a phone number: ${number.reason}`;
  const out = frames.map((frame) => {
    const options = { maxParts: settings.max_parts };
    const planned = frame.kind === 'text' && frame.text !== null ? planMessage(frame.text, { ...options, encoding: settings.encoding }) : planData(frame.payload, options);
    if (!planned.ok) {
      return { bytes: frame.payload.length, fits: false, encoding: null, parts: planned.partsNeeded, error: `ERR_SMS_TOO_LONG: ${planned.error}; this interface sends at most ${settings.max_parts} parts (${mtu} bytes of data)` };
    }
    return { bytes: frame.payload.length, fits: addressError === null, encoding: planned.plan.encoding, parts: planned.plan.parts.length, error: addressError };
  });
  const parts = out.reduce((n, f) => n + (f.parts ?? 0), 0);
  return { address: to, mtu, frames: out, budget: smsBudget(parts, settings.parts_per_day, src.stats), cost: { unit: SMS_PARTS.unit, amount: parts } };
}

/** Whether `parts` fit in today's budget (parts_per_day) as the running bearer counts it. */
function smsBudget(parts: number, perDay: number | null, stats: Record<string, unknown>): { allows: boolean; reason: string | null } {
  if (perDay === null) return { allows: true, reason: null };
  if (parts > perDay) return { allows: false, reason: `ERR_SMS_BUDGET: ${parts} parts will never fit in the daily budget of ${perDay} parts` };
  // The budget is kept by the running bearer (budget.ts); a stopped one starts the day full.
  const left = typeof stats.parts_left_today === 'number' ? stats.parts_left_today : perDay;
  if (parts > left) return { allows: false, reason: `ERR_SMS_BUDGET: the daily budget of ${perDay} parts has ${left} left, ${parts} needed` };
  return { allows: true, reason: null };
}
