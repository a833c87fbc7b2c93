import type { BearerState, InboundFrame, OutboundFrame } from '../../../src/bearers/bearer.ts';
import { createSimBearer, SimBearer, type SimChannels } from '../../../src/bearers/sim/sim-bearer.ts';
import type { Clock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

// A sim bearer with what it heard, the states it reported and its log lines, for the sim
// bearer tests; and an outbound frame to send.

export interface Radio {
  bearer: SimBearer;
  heard: InboundFrame[];
  states: BearerState[];
  logs: string[];
}

export function simRadio(clock: Clock, name: string, settings: Record<string, unknown> = {}, registry?: SimChannels): Radio {
  const heard: InboundFrame[] = [];
  const states: BearerState[] = [];
  const logs: string[] = [];
  const ctx = bearerContext({
    interfaceId: `ifc_${name}`,
    interfaceName: name,
    settings,
    log: createLogger({ level: 'debug', format: 'json', write: (line) => logs.push(line) }),
    clock,
    events: { receive: (f: InboundFrame) => void heard.push(f), state: (s: BearerState) => states.push(s) },
  });
  return { bearer: registry ? new SimBearer(ctx, registry) : (createSimBearer(ctx) as SimBearer), heard, states, logs };
}

export const frame = (over: Partial<OutboundFrame> = {}): OutboundFrame => ({
  deliveryId: 'dlv_1',
  messageId: 'msg_1',
  to: '!a1b2c3d4',
  channel: 0,
  kind: 'text',
  text: 'hello',
  payload: new TextEncoder().encode('hello'),
  ...over,
});
