import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { smsEstimate, SMS_PARTS } from './estimate.ts';
import { lazyOpenSim, lazySimulator } from '../shared/simulators/lazy.ts';
import { SMS_SIM_OPTIONS, SMS_SIM_USAGE } from './simulator/usage.ts';
import { createSmsBearer } from './driver.ts';
import { SMS_SECRET_SETTINGS, SmsSettings } from './settings.ts';
import { smsStats } from './stats.ts';

// The SMS / cellular modem (docs/sms.md; wire facts docs/protocols/sms.md) as a driver module,
// on the shared AT session (bearers/shared/at/). No probe: `auto` never claims a cellular modem
// (docs/protocols/usb-ids.md), so an SMS interface is bound by its by-id path or USB serial.

export const smsDriver = defineDriver({
  kind: 'sms',
  title: 'SMS',
  keepsUnstoredFrames: true,
  tellsTime: "the cellular network's time, from the service centre's timestamp of a received SMS",
  settings: SmsSettings as unknown as z.ZodType<Record<string, unknown>>,
  secretSettings: SMS_SECRET_SETTINGS,
  contact: { field: 'sms', schema: z.string().regex(/^\+?[0-9]{3,20}$/, 'must be a phone number: digits, optionally starting with +') },
  create: (ctx) => createSmsBearer(ctx, { openLink: ctx.openLink }),
  // The simulators load when used: bearers/shared/simulators/lazy.ts.
  openSim: lazyOpenSim(async () => (await import('./simulator/link.ts')).openSmsSimLink),
  simulator: lazySimulator({ usage: SMS_SIM_USAGE, options: SMS_SIM_OPTIONS }, async () => (await import('./simulator/cli.ts')).smsSimulator),
  stats: smsStats,
  estimate: smsEstimate,
  usageUnit: SMS_PARTS,
});
