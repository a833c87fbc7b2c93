import type { Link } from '../../shared/links/link.ts';
import { SmsModem, type SmsModemOptions } from './modem.ts';
import { SmsNetwork, type SmsNetworkOptions } from './network.ts';
import { type SimLink, SimWorlds } from '../../shared/simulators/sim-worlds.ts';

// sim://<channel> for SMS interfaces (docs/design.md section 6): each open attaches one
// simulated modem, in this process, to the network the channel names, and returns a Link to
// it. Two interfaces bound to sim://lab can text each other; tests reach the network with
// smsSimNetwork('lab') to inject messages or mark numbers unreachable. The network gives each
// modem the next +1555000000N unless `number` is given. No socket or pty. Bytes cross
// asynchronously (setImmediate), as from a real stream, never re-entrantly.
//
// A closed link is a modem unplugged: it keeps its number and stored messages (the network
// holds what comes meanwhile), and the next open of the same channel (with the same number,
// or none) plugs it back in.

const worlds = new SimWorlds<SmsNetwork, SmsModem, SmsNetworkOptions>((options) => new SmsNetwork(options));

/** The network of a sim:// channel, made on first use; `options` apply only then (a test
 *  that wants the centre's time stamps on a fake clock, or in another zone, makes the
 *  network before the first open: its modems take the network's clock). */
export const smsSimNetwork = (name: string, options?: SmsNetworkOptions): SmsNetwork => worlds.world(name, options);

/** A link to a simulated modem, and the modem behind it (tests inspect its storage and counters or inject faults). */
export type SmsSimLink = SimLink<'modem', SmsModem>;

export async function openSmsSimLink(channelName: string, options: Omit<SmsModemOptions, 'network'> = {}): Promise<SmsSimLink> {
  const network = worlds.world(channelName);
  let modem = worlds.replug(channelName, (m) => options.number === undefined || m.number === options.number);
  if (modem) modem.reset(); // plugged in again: it powers up (RDY), settings forgotten, messages kept
  else modem = new SmsModem({ name: worlds.nextName(channelName), ...options, network });
  const plugged = modem;
  // Unplugged, its stored messages wait for the next open.
  return Object.assign(worlds.plug(plugged, channelName, () => plugged.detachHost()), { modem: plugged });
}
