import { serveDevicePty, type PtyServeOptions, type SimTransport } from '../../shared/simulators/pty.ts';
import { serveDeviceTcp } from '../../shared/simulators/tcp.ts';
import type { SmsModem } from './modem.ts';

// Carries a simulated modem over a real byte stream, so a host (the bridge's driver, Gammu,
// minicom) drives it unchanged:
//  - TCP, like a serial-to-network adapter: one client at a time (a newcomer replaces the
//    previous one); the modem keeps its state and stored messages across clients;
//  - a pseudo-terminal pair made by socat, like a USB modem: the modem opens one end at
//    115200 baud, the host the other (a stable symlink, e.g. for Gammu's `device =`).
// Both can be taken down and brought up again (stop/start) to test reconnection.

export type { SimTransport };

export interface SmsTcpServeOptions {
  host?: string;
  /** 0 picks a free port (tests); kept across stop/start. */
  port?: number;
}

export function serveSmsTcp(modem: SmsModem, options: SmsTcpServeOptions = {}): Promise<SimTransport> {
  return serveDeviceTcp(modem, { port: 0, ...options });
}


export type SmsPtyServeOptions = PtyServeOptions;

/** A simulated modem on a pty pair (bearers/shared/simulators/pty.ts), for the bridge and for Gammu. */
export function serveSmsPty(modem: SmsModem, options: PtyServeOptions): Promise<SimTransport> {
  return serveDevicePty(modem, options);
}
