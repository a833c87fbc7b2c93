import { z } from 'zod';

// Settings of a `meshtastic` interface (docs/meshtastic.md, "Settings"). The radio's own
// settings (region, preset, owner names, modules) are bridge-wide configuration sections the
// driver applies to the device (docs/architecture.md, "Device configuration"), not these.

const int = (what: string) => z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` });

export const MeshtasticSettings = z
  .strictObject({
    channel: int('channel').min(0, { error: 'channel must be 0 to 7' }).max(7, { error: 'channel must be 0 to 7' }).default(0)
      .describe('Channel index a message goes out on when its delivery names none (0 = primary)'),
    hop_limit: int('hop_limit').min(0, { error: 'hop_limit must be 0 to 7' }).max(7, { error: 'hop_limit must be 0 to 7' }).nullable().default(null)
      .describe('Hops a message we send may take; null = the hop_limit of the device\'s LoRa config'),
    ack_timeout_s: int('ack_timeout_s').min(1, { error: 'ack_timeout_s must be 1 to 3600' }).max(3600, { error: 'ack_timeout_s must be 1 to 3600' }).default(60)
      .describe('Seconds to wait for the acknowledgement of a message; none in time is a retryable failure'),
    handshake_timeout_s: int('handshake_timeout_s').min(1, { error: 'handshake_timeout_s must be 1 to 600' }).max(600, { error: 'handshake_timeout_s must be 1 to 600' }).default(90)
      .describe('Seconds the device may take to send its state after connecting (a large node database takes 30-60 s)'),
    heartbeat_s: int('heartbeat_s').min(1, { error: 'heartbeat_s must be 1 to 300' }).max(300, { error: 'heartbeat_s must be 1 to 300' }).default(300)
      .describe('Seconds between heartbeats; a device silent for two heartbeats and 30 s is taken as gone and reconnected'),
  })
  .describe('Settings of a meshtastic interface');
export type MeshtasticSettings = z.infer<typeof MeshtasticSettings>;
