import { z } from 'zod';
import { defineDriver } from '../driver-module.ts';
import { SMS_SECRET_SETTINGS, SmsSettings } from './settings.ts';

// The SMS / cellular modem (docs/protocols/sms.md). No driver in this release yet: the kind
// can be configured, and binding it reports "no driver".

export const smsDriver = defineDriver({
  kind: 'sms',
  title: 'SMS',
  settings: SmsSettings as unknown as z.ZodType<Record<string, unknown>>,
  secretSettings: SMS_SECRET_SETTINGS,
  contact: { field: 'sms', schema: z.string().regex(/^\+?[0-9]{3,20}$/, 'must be a phone number: digits, optionally starting with +') },
});
