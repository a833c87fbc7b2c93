import type { Link } from '../../shared/links/link.ts';
import { type SimLink, SimWorlds } from '../../shared/simulators/sim-worlds.ts';
import { IridiumGateway, type IridiumGatewayOptions } from './gateway.ts';
import { IridiumModem, type IridiumModemOptions } from './modem.ts';

// sim://<channel> for Iridium interfaces: each open attaches one simulated SBD modem, in this
// process, to the gateway the channel names, and returns a Link to it. Tests reach the
// gateway with iridiumSimGateway('lab') to queue MT messages, read the MO messages that came
// and script the sky. Modems on one channel get distinct IMEIs and RockBLOCK serials, so two
// interfaces on sim://lab can write to each other with the `RB` prefix (gateway.ts). No
// socket or pty; bytes cross asynchronously (in-process-link.ts).
//
// A closed link is a modem unplugged, not powered off: it keeps its IMEI, buffers and
// settings (a RockBLOCK keeps its power when the host closes the port), the gateway keeps
// queueing for it, and the next open of the channel (with the same IMEI, or none) plugs it in.

const worlds = new SimWorlds<IridiumGateway, IridiumModem, IridiumGatewayOptions>((options) => new IridiumGateway(options));

/** The gateway (and sky) of a sim:// channel, made on first use; `options` apply only then
 *  (a test that wants the network's time on a fake clock makes the gateway before the bridge
 *  opens the channel: its modems take the gateway's clock). */
export const iridiumSimGateway = (channel: string, options?: IridiumGatewayOptions): IridiumGateway => worlds.world(channel, options);

/** A link to a simulated modem, and the modem behind it (tests inspect its buffers and counters or inject faults). */
export type IridiumSimLink = SimLink<'modem', IridiumModem>;

export async function openIridiumSimLink(channel: string, options: Omit<IridiumModemOptions, 'gateway'> = {}): Promise<IridiumSimLink> {
  const gateway = worlds.world(channel);
  const modem = worlds.replug(channel, (m) => options.imei === undefined || m.imei === options.imei) ?? new IridiumModem({ ...options, gateway, clock: options.clock ?? gateway.clock });
  return Object.assign(worlds.plug(modem, channel, () => modem.detachHost()), { modem });
}
