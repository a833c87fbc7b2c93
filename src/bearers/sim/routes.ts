import { z } from 'zod';
import { ADMIN, route, type Route } from '../../http/route.ts';
import { conflict } from '../../lib/errors.ts';
import type { DriverApi } from '../driver-module.ts';
import { type SimChannels, simChannels } from './channels.ts';

// The sim bearer's own endpoint (docs/routing.md section 7, "Taking a link down"): an operator
// or a test takes a running sim interface's link down and brings it up again, its settings
// and binding untouched. The dispatcher sees it through the bearer's state events, as it sees
// a real radio that went away and came back.

const Ref = z.object({ id: z.string().min(1).describe('Interface id or name') });

const SimLink = z.object({
  id: z.string(),
  name: z.string(),
  up: z.boolean().describe('The link switch this route sets'),
  connected: z.boolean().describe('The interface\'s link state, as GET /api/interfaces/health shows it'),
  phase: z.string(),
  last_error: z.string().nullable(),
});

export function simRoutes(interfaces: DriverApi, registry: SimChannels = simChannels): Route[] {
  return [
    route({
      method: 'POST', path: '/api/sim/{id}/link', tags: ['interfaces'], roles: ADMIN, params: Ref, errors: [409],
      summary: 'Take a sim interface\'s link down ({"up": false}) or bring it up again; settings and binding stay',
      description: 'While down the interface reports connected: false, hears nothing from its channel, and its sends (and sends waiting for an acknowledgement) fail with ERR_SIM_OFFLINE, retryably. '
        + 'The interface must be running (enabled and bound to sim://<channel>): 409 otherwise. A restart of the interface (new settings, bind, enable) brings the link up.',
      body: z.strictObject({ up: z.boolean({ error: (issue) => `up must be true or false; got ${JSON.stringify(issue.input) ?? 'nothing'}` }).describe('false takes the link down, true brings it up') }),
      bodyName: 'SimLinkChange', response: SimLink, responseName: 'SimLink',
      handler: ({ params, body }) => {
        const row = interfaces.get(params.id);
        const bearer = registry.running(row.id);
        if (!bearer?.setLink(body.up)) {
          const link = interfaces.link(row.id);
          throw conflict('ERR_SIM_NOT_RUNNING', `sim interface '${row.name}' must be running (enabled and bound to sim://<channel>) to set its link; it is ${link.phase}${row.device === null ? '' : ` (device ${row.device})`}`);
        }
        const link = interfaces.link(row.id);
        return { id: row.id, name: row.name, up: bearer.linkUp, connected: link.connected, phase: link.phase, last_error: link.last_error };
      },
    }),
  ];
}
