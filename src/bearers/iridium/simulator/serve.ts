import { serveDevicePty, type PtyServeOptions, type SimTransport } from '../../shared/simulators/pty.ts';
import { serveDeviceTcp, type TcpTransport } from '../../shared/simulators/tcp.ts';
import type { HostedDevice } from '../../shared/simulators/pty.ts';

// Carries a simulated SBD modem over a real byte stream, so a host (the bridge's driver,
// minicom, a SparkFun sketch through a serial bridge) drives it unchanged:
//  - TCP, like a serial-to-network adapter: one client at a time (a newcomer replaces the
//    previous one); the modem keeps its buffers and settings across clients;
//  - a pseudo-terminal pair made by socat, like a RockBLOCK on USB: 19200 baud
//    (iridium-sbd.md 3.1), the host opening the stable symlink.
// Both can be taken down and brought up again (stop/start) to test reconnection.

export type { SimTransport, TcpTransport };

export interface IridiumTcpServeOptions {
  host?: string;
  /** 0 picks a free port (tests); kept across stop/start. */
  port?: number;
}

export function serveIridiumTcp(modem: HostedDevice, options: IridiumTcpServeOptions = {}): Promise<TcpTransport> {
  return serveDeviceTcp(modem, { port: 0, ...options });
}

export type IridiumPtyServeOptions = PtyServeOptions;

/** A simulated modem on a pty pair (bearers/shared/simulators/pty.ts), at 19200 baud unless told. */
export function serveIridiumPty(modem: HostedDevice, options: IridiumPtyServeOptions): Promise<SimTransport> {
  return serveDevicePty(modem, { baudRate: 19200, ...options });
}
