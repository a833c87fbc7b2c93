import type { Link } from '../../shared/links/link.ts';
import { SmsModem, type SmsModemOptions } from './modem.ts';
import { SmsNetwork, type SmsNetworkOptions } from './network.ts';
import { inProcessLink } from '../../shared/simulators/in-process-link.ts';

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

const networks = new Map<string, SmsNetwork>();
const unplugged = new Map<string, SmsModem[]>();

/** The network of a sim:// channel, made on first use; `options` apply only then (a test
 *  that wants the centre's time stamps on a fake clock, or in another zone, makes the
 *  network before the first open: its modems take the network's clock). */
export function smsSimNetwork(name: string, options?: SmsNetworkOptions): SmsNetwork {
  let network = networks.get(name);
  if (!network) {
    network = new SmsNetwork(options);
    networks.set(name, network);
  }
  return network;
}

export interface SmsSimLink extends Link {
  /** The modem behind the link (tests inspect its storage and counters or inject faults). */
  readonly modem: SmsModem;
}

let opened = 0;

export async function openSmsSimLink(channelName: string, options: Omit<SmsModemOptions, 'network'> = {}): Promise<SmsSimLink> {
  const network = smsSimNetwork(channelName);
  const pool = unplugged.get(channelName) ?? [];
  unplugged.set(channelName, pool);
  const again = pool.findIndex((m) => options.number === undefined || m.number === options.number);
  let modem: SmsModem;
  if (again >= 0) {
    modem = pool.splice(again, 1)[0];
    modem.reset(); // plugged in again: it powers up (RDY), settings forgotten, messages kept
  } else {
    modem = new SmsModem({ name: `${channelName}-${++opened}`, ...options, network });
  }
  // A closed link is the modem unplugged: its stored messages wait for the next open.
  const { link } = inProcessLink(modem, `sim://${channelName}`, () => {
    modem.detachHost();
    pool.push(modem);
  });
  return Object.assign(link, { modem });
}
