import type { Clock } from '../../../lib/clock.ts';
import { SERIAL_BAUD, TCP_PORT } from '../codec/messages.ts';
import { followEvents, serveDevicePty, type PtyServeOptions, type SimTransport } from '../../shared/simulators/pty.ts';
import { serveDeviceTcp } from '../../shared/simulators/tcp.ts';
import type { MeshtasticDevice } from './device.ts';

// Carries a simulated Meshtastic device over a real byte stream, so the bridge's driver runs
// unchanged (docs/protocols/meshtastic.md 2.1, 2.7):
//  - TCP on port 4403 like a WiFi node: one client at a time (a newcomer replaces the previous
//    one), a client silent for 15 minutes is dropped, and a reboot drops the connection;
//  - a pseudo-terminal pair made by socat, like a USB board: the device opens one end at
//    115200 baud, the bridge the other (a stable symlink). A reboot keeps the port, as a
//    USB-serial bridge chip does.
// Both can be taken down and brought up again (stop/start), and device.dropLink() (the fault)
// does what transport.dropLink() does.

/** The firmware forgets a client after 15 minutes without a ToRadio (docs 2.2). */
export const CLIENT_IDLE_MS = 15 * 60_000;

export type { SimTransport };

export interface MeshtasticTcpServeOptions {
  host?: string;
  /** Default 4403; 0 picks a free port (tests), kept across stop/start. */
  port?: number;
  clock?: Clock;
  idleTimeoutMs?: number;
}

export async function serveMeshtasticTcp(device: MeshtasticDevice, options: MeshtasticTcpServeOptions = {}): Promise<SimTransport> {
  const transport = await serveDeviceTcp(device, {
    port: TCP_PORT,
    ...options,
    idleTimeoutMs: options.idleTimeoutMs ?? CLIENT_IDLE_MS,
    onIdle: () => device.emit('client-timeout'),
  });
  return followEvents(transport, device, {
    'drop-link': () => transport.dropClient(),
    // After a reboot the last frame (rebooted) is flushed before the connection ends.
    rebooted: () => transport.dropClient(true),
  });
}


export type MeshtasticPtyServeOptions = PtyServeOptions;

/** A simulated Meshtastic board on a pty pair (bearers/shared/simulators/pty.ts). The port stays across a
 *  reboot, as a USB serial port does; a dropped link comes back under the same path. */
export async function serveMeshtasticPty(device: MeshtasticDevice, options: PtyServeOptions): Promise<SimTransport> {
  const transport = await serveDevicePty(device, { baudRate: SERIAL_BAUD, ...options });
  return followEvents(transport, device, { 'drop-link': () => void transport.dropLink().catch(() => {}) });
}
