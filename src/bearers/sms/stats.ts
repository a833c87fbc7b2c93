import { z } from 'zod';
import { counted as count } from '../shared/stats-fields.ts';
import type { StatsView } from '../driver-module.ts';

// What an sms interface reports (GET /api/interfaces/{id}/stats; docs/sms.md, "Health").


const SmsStats = z.object({
  modem: z.string().nullable().describe('Model the modem reported (AT+CGMM)'),
  registration: z.string().nullable().describe('Network registration (AT+CREG): home network, roaming, searching, not registered...'),
  signal_csq: z.number().int().nullable().describe('Signal quality 0-31 (AT+CSQ; 99 = unknown shows null)'),
  new_message_indications: z.string().nullable().describe('The AT+CNMI setting the modem took'),
  parts_sent_today: count('SMS parts sent today (UTC)'),
  parts_left_today: z.number().int().nullable().describe('Parts left in today\'s budget (parts_per_day); null without a limit'),
  parts_waiting_for_reassembly: count('Parts of long messages received and waiting for the rest'),
  awaiting_reports: count('Messages waiting for their status reports'),
  centre_time: z.object({ time: z.iso.datetime(), local: z.string(), read_at: z.iso.datetime() }).nullable()
    .describe('The newest SMS centre timestamp received (UTC and as the centre wrote it, with its zone) and when it was read (the bridge\'s clock); docs/clock.md'),
  received: count('Messages stored'),
  sent_parts: count('Parts the SMS centre accepted'),
  sent_messages: count('Messages all of whose parts were accepted'),
  failed: count('Send attempts that failed'),
  reports: count('Status reports received'),
  undecodable: count('PDUs that could not be decoded (kept on the SIM)'),
  deleted: count('Messages deleted from the SIM after they were stored'),
  store_failures: count('Messages the database could not store (kept on the SIM, read again)'),
  incomplete: count('Long messages stored with parts missing after the reassembly timeout'),
});

const ZERO = {
  modem: null, registration: null, signal_csq: null, new_message_indications: null, parts_sent_today: 0, parts_left_today: null,
  parts_waiting_for_reassembly: 0, awaiting_reports: 0, centre_time: null, received: 0, sent_parts: 0, sent_messages: 0, failed: 0, reports: 0,
  undecodable: 0, deleted: 0, store_failures: 0, incomplete: 0,
};

export const smsStats: StatsView<z.infer<typeof SmsStats>> = {
  schema: SmsStats,
  read: (raw) => SmsStats.parse({ ...ZERO, ...Object.fromEntries(Object.entries(raw).filter(([k]) => k in ZERO)) }),
};
