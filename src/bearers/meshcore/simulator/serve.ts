import type { Clock } from '../../../lib/clock.ts';
import { SERIAL_BAUD, TCP_PORT } from '../codec/constants.ts';
import { followEvents, serveDevicePty, type PtyServeOptions, type SimTransport } from '../../shared/simulators/pty.ts';
import { serveDeviceTcp } from '../../shared/simulators/tcp.ts';
import type { MeshCoreDevice } from './device.ts';

// Carries a simulated MeshCore companion radio over a real byte stream, so a host (the
// bridge's driver, or meshcore.js) runs unchanged (docs/protocols/meshcore.md 6.1):
//  - TCP on port 5000 like the WiFi companion firmware: one client at a time (a newcomer
//    replaces the previous one);
//  - a pseudo-terminal pair made by socat, like a USB board at 115200 baud.
// device.dropLink() (the fault) does what transport.dropLink() does.

export type { SimTransport };

export interface MeshCoreTcpServeOptions {
  host?: string;
  /** Default 5000; 0 picks a free port (tests), kept across stop/start. */
  port?: number;
  clock?: Clock;
  idleTimeoutMs?: number;
}

export async function serveMeshCoreTcp(device: MeshCoreDevice, options: MeshCoreTcpServeOptions = {}): Promise<SimTransport> {
  const transport = await serveDeviceTcp(device, { port: TCP_PORT, ...options });
  return followEvents(transport, device, { 'drop-link': () => transport.dropClient() });
}

/** A simulated companion radio on a pty pair (bearers/shared/simulators/pty.ts); a dropped link comes back
 *  under the same path. */
export async function serveMeshCorePty(device: MeshCoreDevice, options: PtyServeOptions): Promise<SimTransport> {
  const transport = await serveDevicePty(device, { baudRate: SERIAL_BAUD, ...options });
  return followEvents(transport, device, { 'drop-link': () => void transport.dropLink().catch(() => {}) });
}
