import { z } from 'zod';
import { counted as count } from '../shared/stats-fields.ts';
import { systemClock } from '../../lib/clock.ts';
import type { StatsView } from '../driver-module.ts';
import { CreditLedger } from './credits.ts';
import { IridiumSettings } from './settings.ts';

// What an iridium interface reports (GET /api/interfaces/{id}/stats, health, /metrics;
// docs/iridium.md, "Health"). The credits come from the ledger in the database, so a stopped
// interface still shows what it spent.


const IridiumStats = z.object({
  imei: z.string().nullable().describe('The modem\'s IMEI (AT+CGSN)'),
  firmware: z.string().nullable().describe('Firmware versions the modem reported (AT+CGMR)'),
  model: z.string().nullable().describe('Model the modem reported (AT+CGMM)'),
  signal_bars: z.number().int().nullable().describe('Signal bars 0-5 at the last check (AT+CSQF)'),
  waiting: z.string().nullable().describe('Why messages wait instead of going out (budget spent, no signal); null when they do not'),
  next_session_at: z.iso.datetime().nullable().describe('Sessions are paced: the earliest the next may start; null when it may start now'),
  last_session: z.object({ at: z.iso.datetime(), mo_status: z.number().int(), meaning: z.string(), momsn: z.number().int().nullable() }).nullable()
    .describe('The last session the modem answered'),
  mt_queued: count('Messages the gateway said it still holds for this modem'),
  network_time: z.object({ time: z.iso.datetime(), era: z.string(), read_at: z.iso.datetime() }).nullable()
    .describe('The Iridium network\'s time at the last AT-MSSTM, its era, and when it was read (the bridge\'s clock); docs/clock.md'),
  network_time_unavailable: z.string().nullable().describe('Why the last AT-MSSTM gave no time (no network service yet, a count of an unknown era); null when it did'),
  registered: z.boolean().describe('Whether the modem is registered with the gateway since it powered up (ring alerts need it)'),
  credits_today: count('Credits spent today (UTC), as the provider bills them'),
  credits_this_month: count('Credits spent this calendar month (UTC)'),
  credits_total: count('Credits spent since the interface was created'),
  credits_left_today: z.number().int().nullable().describe('Left in today\'s budget (credits_per_day); null without a limit'),
  credits_left_this_month: z.number().int().nullable().describe('Left in this month\'s budget (credits_per_month); null without a limit'),
  sessions: count('Sessions started (AT+SBDIX)'),
  sessions_failed: count('Sessions that failed (not billed)'),
  sent: count('Messages the gateway took'),
  failed: count('Send attempts that failed'),
  mo_reused: count('Retries that reused the message already in the modem instead of writing it again'),
  received: count('Messages received and stored'),
  mailbox_checks: count('Sessions without a message to send (ring alerts, queued messages, periodic checks)'),
  ring_alerts: count('Ring alerts (SBDRING) heard'),
  mt_bad_checksum: count('Received messages whose checksum did not match (read again once, then dropped)'),
  mt_read_failures: count('Reads of a received message that got no answer'),
  store_failures: count('Received messages the database could not store (kept in the modem and retried)'),
  network_time_reads: count('Network times read (AT-MSSTM) and told to the bridge'),
});

const ZERO = {
  imei: null, firmware: null, model: null, signal_bars: null, waiting: null, next_session_at: null, last_session: null, mt_queued: 0, registered: false,
  network_time: null, network_time_unavailable: null,
  sessions: 0, sessions_failed: 0, sent: 0, failed: 0, mo_reused: 0, received: 0, mailbox_checks: 0, ring_alerts: 0, mt_bad_checksum: 0,
  mt_read_failures: 0, store_failures: 0, network_time_reads: 0,
};

export const iridiumStats: StatsView<z.infer<typeof IridiumStats>> = {
  schema: IridiumStats,
  read: (raw, settings, state, clock = systemClock) => {
    const running = Object.fromEntries(Object.entries(raw).filter(([k]) => k in ZERO));
    const limits = IridiumSettings.safeParse(settings);
    const ledger = new CreditLedger(clock, state ?? { get: () => null }, {
      perDay: limits.success ? limits.data.credits_per_day : null,
      perMonth: limits.success ? limits.data.credits_per_month : null,
    });
    return IridiumStats.parse({ ...ZERO, ...running, ...ledger.view() });
  },
};
