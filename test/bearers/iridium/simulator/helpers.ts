import { FakeClock } from '../../../../src/lib/clock.ts';
import { IridiumGateway } from '../../../../src/bearers/iridium/simulator/gateway.ts';
import { IridiumModem, type IridiumModemOptions } from '../../../../src/bearers/iridium/simulator/modem.ts';

/** A modem with a host that records every byte it sends (as latin1), driven by hand. */
export class Host {
  readonly modem: IridiumModem;
  out = '';

  constructor(modem: IridiumModem) {
    this.modem = modem;
    modem.attachHost((bytes) => (this.out += Buffer.from(bytes).toString('latin1')));
  }

  /** Sends bytes (a latin1 string: one char per byte) and returns what the modem wrote since
   *  the last take(). */
  send(bytes: string): string {
    this.modem.fromHost(Buffer.from(bytes, 'latin1'));
    return this.take();
  }

  /** A command line: "AT+SBDIX" (CR added). */
  at(line: string): string {
    return this.send(line + '\r');
  }

  take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }
}

/** A fake clock, a gateway with 5 bars and `modems` modems on it, each with a host. */
export function rig(options: { modems?: number; modem?: Partial<IridiumModemOptions> } = {}) {
  const clock = new FakeClock();
  const gateway = new IridiumGateway({ clock });
  const hosts: Host[] = [];
  for (let i = 0; i < (options.modems ?? 1); i++) hosts.push(new Host(new IridiumModem({ clock, gateway, ...options.modem })));
  return { clock, gateway, hosts, host: hosts[0] };
}

/** Latin1 string of bytes given in hex ("68 65 6C"), for hand-built fixtures. */
export const hex = (s: string): string => Buffer.from(s.replace(/\s+/g, ''), 'hex').toString('latin1');

export async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets pending I/O run (for "nothing happened" checks). */
export const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));
