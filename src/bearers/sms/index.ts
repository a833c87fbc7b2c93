import { z } from 'zod';
import { defineDriver, unspecifiedSettings } from '../driver-module.ts';

// The SMS / cellular modem (docs/protocols/sms.md). No driver in this release yet: the kind
// can be configured, and binding it reports "no driver".

export const smsDriver = defineDriver({
  kind: 'sms',
  title: 'SMS',
  settings: unspecifiedSettings,
  contact: { field: 'sms', schema: z.string().regex(/^\+?[0-9]{3,20}$/, 'must be a phone number: digits, optionally starting with +') },
});
