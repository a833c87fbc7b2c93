import { z } from 'zod';
import { regionNameProblem } from './codec/scope.ts';

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
    flood_scope: z.string().trim().nullable().optional()
      .superRefine((v, ctx) => {
        // '*' is none; a private region ($name) is checked with its key below.
        const problem = v == null || v === '*' ? null : regionNameProblem(v.replace(/^(#?)\$/, '$1x'));
        if (problem) ctx.addIssue({ code: 'custom', message: `flood_scope: ${problem}` });
      })
      .describe('Flood scope (MeshCore region) the radio\'s floods go out in, set on the radio at every start: a public region\'s name as repeaters write it (`de-by` or `#de-by`), `*` for none (clears the radio\'s default scope), or null (or absent) to keep what the radio has. A delivery may name another after \'#\' in its address (docs/meshcore.md, "Flood scopes")'),
    flood_scope_key: z.string().regex(/^[0-9a-fA-F]{32}$/, { error: 'flood_scope_key must be 32 hex digits (a 16-byte key)' }).nullable().optional()
      .describe('The key (32 hex digits) of a private region ($name), whose key is not derived from its name; flood_scope then names it'),
  })
  .superRefine((s, ctx) => {
    const scope = s.flood_scope ?? null;
    const key = s.flood_scope_key ?? null;
    if (key !== null && (scope === null || scope === '*')) {
      ctx.addIssue({ code: 'custom', path: ['flood_scope_key'], message: 'flood_scope_key needs flood_scope to name its region' });
    }
    if (key === null && scope !== null && scope.replace(/^#/, '').startsWith('$')) {
      ctx.addIssue({ code: 'custom', path: ['flood_scope'], message: 'flood_scope: a private region ($name) has no key derived from its name: give flood_scope_key' });
    }
  })
  .describe('Settings of a meshcore interface');
export type MeshCoreSettings = z.infer<typeof MeshCoreSettings>;
