import { z } from 'zod';
import type { StatsView } from '../driver-module.ts';
import { counted as count } from '../shared/stats-fields.ts';
import { ZERO_COUNTERS } from './inbound.ts';

// What an aprs interface reports (GET /api/interfaces/{id}/stats; docs/aprs.md, "Health").

const AprsStats = z.object({
  phase: z.string().describe('The TNC link\'s phase (closed, opening, backoff, online), or APRS-IS\'s on an interface without a TNC'),
  callsign: z.string().nullable().describe('The callsign the interface transmits as; null: it only listens'),
  rf_frames_in: count('AX.25 UI frames heard from the TNC'),
  rf_frames_out: count('Frames handed to the TNC to transmit'),
  rf_frames_bad: count('Frames from the TNC that were not APRS (not UI, other PID, bad address)'),
  rf_queue: count('Frames waiting for their turn on the air'),
  rf_deferred: count('Times a frame waited for the gap or the ten-minute budget (rf_min_gap_s, rf_max_per_10min)'),
  rf_queue_full: count('Frames refused because the airtime queue was full'),
  is_lines_in: count('Packet lines read from APRS-IS'),
  is_lines_out: count('Packet lines sent to APRS-IS'),
  aprs_is_connected: z.boolean().describe('Connected to the APRS-IS server'),
  aprs_is_verified: z.boolean().describe('Logged in with a passcode the server accepted (needed to send)'),
  aprs_is_server_name: z.string().nullable().describe('The server\'s name from its logresp'),
  messages_sent: count('Messages sent to a callsign (each counted once, however often retried)'),
  messages_received: count('Messages to this callsign heard (every copy)'),
  acks_received: count('Acknowledgements that delivered a message'),
  rejs_received: count('Rejects that failed a message'),
  acks_sent: count('Acknowledgements sent'),
  waiting_acks: count('Messages waiting for their acknowledgement'),
  positions_heard: count('Positions, objects and items heard (kept as nodes of network aprs)'),
  heard_stations: count('Stations heard on RF (kept for the iGate rules)'),
  gated_to_is: count('RF packets gated to APRS-IS'),
  gated_to_rf: count('APRS-IS messages gated to RF'),
  not_gated_to_rf: count('APRS-IS messages not gated to RF (addressee not heard directly in 30 minutes, or the sender heard on RF)'),
  beacons_sent: count('Position beacons sent'),
  refused: count('Deliveries refused without transmitting (no callsign, too long, not a callsign)'),
});

const ZERO = { ...ZERO_COUNTERS, phase: 'closed', callsign: null, rf_queue: 0, rf_deferred: 0, aprs_is_connected: false, aprs_is_verified: false, aprs_is_server_name: null, waiting_acks: 0, heard_stations: 0 };

export const aprsStats: StatsView<z.infer<typeof AprsStats>> = {
  schema: AprsStats,
  read: (raw, settings) => AprsStats.parse({
    ...ZERO,
    callsign: typeof settings.callsign === 'string' ? settings.callsign : null,
    ...Object.fromEntries(Object.entries(raw).filter(([k]) => k in ZERO)),
  }),
};
