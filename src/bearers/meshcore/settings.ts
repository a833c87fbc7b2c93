import { z } from 'zod';

// Settings of a `meshcore` interface (a MeshCore companion radio; docs/protocols/meshcore.md).

const int = (what: string) => z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` });
const range = (what: string, min: number, max: number) =>
  int(what).min(min, { error: `${what} must be ${min} to ${max}` }).max(max, { error: `${what} must be ${min} to ${max}` });

export const MeshCoreSettings = z
  .strictObject({
    channel: range('channel', 0, 39).default(0)
      .describe('Channel slot a broadcast goes out on when its delivery names none (0 = the public channel)'),
    command_timeout_s: range('command_timeout_s', 1, 60).default(5)
      .describe('Seconds the radio may take to answer a command (docs 6.4: about 5 s); no answer drops and reopens the link'),
    ack_margin_pct: range('ack_margin_pct', 100, 1000).default(120)
      .describe('How long to wait for a direct message\'s ack, in percent of the timeout the radio suggests (the Python client waits 120 %)'),
    ack_timeout_max_s: range('ack_timeout_max_s', 1, 600).default(60)
      .describe('Longest wait for one ack, whatever the radio suggests'),
    data_type: range('data_type', 1, 0xffff).default(0xffff)
      .describe('data_type of the channel datagrams binary frames go out as (65535 = DATA_TYPE_DEV, the developer namespace; 0 is reserved)'),
    app_name: z.string().min(1).max(32).default('fieldbridge').describe('Application name sent in CMD_APP_START'),
  })
  .describe('Settings of a meshcore interface');
export type MeshCoreSettings = z.infer<typeof MeshCoreSettings>;
