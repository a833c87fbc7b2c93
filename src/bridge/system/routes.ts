import type { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import type { UplinkService } from '../uplink/service.ts';
import type { Route } from '../../http/route.ts';
import { systemRoutes as sharedSystemRoutes, type SystemRouteBasics } from '../../http/system-routes.ts';
import { DbHealth } from '../../db/health.ts';
import { TIME_TELLING_KINDS } from '../../bearers/drivers.ts';
import type { ClockStatus } from '../clock/guard.ts';

export interface SystemDeps extends SystemRouteBasics {
  db: DatabaseSync;
  /** Health reports the uplink and its outbox. */
  uplink?: UplinkService;
  /** Health reports the bridge's clock: its source, a jump it met. */
  clock?: () => ClockStatus;
}

const UplinkHealth = z.object({
  state: z.string().describe('"off", "idle", "enrolling" (trading hub.enrollment_token for this bridge\'s credentials), "connecting", "waiting_for_hub" (connected to the broker, but no hub has answered this start\'s online yet, so nothing is published: an older hub, a bridge not enrolled, a tenant the hub does not know, a hub that is down), "connected" (the hub has answered), "backoff" or "stopped"'),
  enrolled: z.boolean().describe('The bridge publishes signed, under the tenant and bridge id its enrollment gave (docs/hub.md, "Enrollment"); which ones is in the log line uplink_enrolled, not here: health needs no key'),
  outbox: z.object({
    rows: z.number().int().describe('Events waiting for the hub\'s acknowledgement'),
    bytes: z.number().int().describe('Their size as counted against hub.outbox_max_mb'),
    max_bytes: z.number().int().nullable().describe('hub.outbox_max_mb in bytes; null while the uplink is off'),
    oldest_age_s: z.number().int().describe('Age of the oldest waiting event in seconds; 0 when none'),
    dropped: z.number().int().describe('Telemetry and position events dropped from a full outbox since the start'),
    refused: z.number().int().describe('Events not written because the outbox was full, since the start'),
  }),
}).describe('The hub uplink and its outbox (docs/hub.md)');

const ClockHealth = z.object({
  time: z.string().describe('The bridge\'s time now (ISO 8601, UTC): what ids, deadlines, schedules and retention use'),
  source: z.enum(['system', 'last_good', ...TIME_TELLING_KINDS]).describe('What set it: "system" (the system clock), "last_good" (the system clock was behind the last time this bridge knew, so the bridge counts on from that time), or the kind of the interface whose device time was taken (bridge.clock.radio_time)'),
  system_offset_s: z.number().int().describe('The system clock minus the bridge\'s time, in seconds: negative while the system clock is behind and the bridge keeps its own time'),
  last_good_at: z.string().describe('The latest time the bridge knew to be good; it never counts back past it'),
  last_jump: z.object({
    at: z.string().describe('When it was seen, by the system clock'),
    when: z.enum(['start', 'running']),
    seconds: z.number().int().describe('Signed size of the jump: positive forwards'),
    source: z.enum(['system', 'last_good', ...TIME_TELLING_KINDS]),
    action: z.string().describe('What the bridge did about it'),
  }).nullable().describe('The last clock jump seen (beyond 30 s), null when none since the start'),
}).describe('The bridge\'s clock (docs/decisions.md, "Issue 30: a clock a Raspberry Pi cannot trust")');

export function systemRoutes(deps: SystemDeps): Route[] {
  // Never waits on a lock, at most one check a second (db/health.ts).
  const health = new DbHealth(deps.db);
  return sharedSystemRoutes({
    ...deps,
    what: 'bridge (the "Bridge API")',
    checkDb: () => health.status(),
    extra: {
      shape: { uplink: UplinkHealth.optional(), clock: ClockHealth.optional() },
      values: () => {
        const out: Record<string, unknown> = {};
        if (deps.clock) out.clock = deps.clock();
        const u = deps.uplink;
        // Reading the outbox needs the database; a closed one reports through db already.
        try {
          if (u) out.uplink = { state: u.state(), enrolled: u.identity()?.enrolled ?? false, outbox: u.outbox() };
        } catch {
          // Reported through db.
        }
        return out;
      },
    },
  });
}
