import { z } from 'zod';

// Settings of an `iridium` interface (docs/iridium.md, "Settings").

const int = (what: string, min: number, max: number) =>
  z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` })
    .min(min, { error: `${what} must be ${min} to ${max}` }).max(max, { error: `${what} must be ${min} to ${max}` });

/** Serial speeds a 9602/9603 takes (AT+IPR); RockBLOCKs ship at 19200 (iridium-sbd.md 3.1). */
export const IRIDIUM_BAUD_RATES = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200] as const;

export const IridiumSettings = z
  .strictObject({
    baud: z.literal(IRIDIUM_BAUD_RATES, { error: `baud must be one of ${IRIDIUM_BAUD_RATES.join(', ')}` }).default(19200)
      .describe('Serial speed of the modem (RockBLOCK: 19200)'),
    session_interval_s: int('session_interval_s', 0, 3600).default(10)
      .describe('Least time between two satellite sessions'),
    failure_backoff_s: int('failure_backoff_s', 0, 86_400).default(60)
      .describe('Least time after a failed session before the next one (180 s at least after "no network service")'),
    session_timeout_s: int('session_timeout_s', 30, 600).default(120)
      .describe('Longest a session (AT+SBDIX) may take before it counts as failed and the modem is reopened'),
    mailbox_check_s: int('mailbox_check_s', 0, 7 * 86_400).default(0)
      .describe('Check for waiting messages every this many seconds with an empty session (1 credit each); 0 = never'),
    ring_alerts: z.boolean().default(true)
      .describe('Ask the modem to announce waiting messages (AT+SBDMTA=1, SBDRING) and fetch them at once'),
    min_signal: int('min_signal', 0, 5).default(1)
      .describe('Least signal bars (AT+CSQF) to start a session; below it messages wait for the sky'),
    credits_per_day: int('credits_per_day', 1, 1_000_000).nullable().default(null)
      .describe('Most credits spent per UTC day; when spent, messages wait (they are not failed). null = no limit'),
    credits_per_month: int('credits_per_month', 1, 10_000_000).nullable().default(null)
      .describe('Most credits spent per UTC calendar month; null = no limit'),
  })
  .describe('Settings of an iridium interface');
export type IridiumSettings = z.infer<typeof IridiumSettings>;
