import type { Clock } from '../../../lib/clock.ts';
import { serveDevicePty, type PtyServeOptions, type SimTransport } from '../../shared/simulators/pty.ts';
import { serveDeviceTcp } from '../../shared/simulators/tcp.ts';
import type { RNodeSimulator } from './simulator.ts';

// Carries a simulated RNode over a real byte stream, so the bridge's driver runs unchanged:
//  - TCP, like a WiFi RNode (docs/protocols/rnode.md 1.1): one client; the device drops a client it has
//    heard nothing from for 6500 ms (WR_READ_TIMEOUT_MS), which the host's 3.5 s detect
//    keep-alive prevents;
//  - a pseudo-terminal pair made by socat: the simulator opens one end with serialport at
//    115200 baud, the bridge opens the other (a stable symlink) with the real binding.
// Both can be taken down and brought up again (stop/start) to test reconnection.

export const WR_READ_TIMEOUT_MS = 6500;

export type { PtyServeOptions, SimTransport };

export interface TcpServeOptions {
  host?: string;
  /** 0 picks a free port (tests); it is kept across stop/start. */
  port?: number;
  clock?: Clock;
  readTimeoutMs?: number;
}

export function serveRNodeTcp(sim: RNodeSimulator, options: TcpServeOptions = {}): Promise<SimTransport> {
  return serveDeviceTcp(sim, {
    port: 7633,
    ...options,
    idleTimeoutMs: options.readTimeoutMs ?? WR_READ_TIMEOUT_MS,
    onIdle: () => sim.emit('client-timeout'),
  });
}


/** The simulated RNode on a pty pair (bearers/shared/simulators/pty.ts). */
export function serveRNodePty(sim: RNodeSimulator, options: PtyServeOptions): Promise<SimTransport> {
  return serveDevicePty(sim, options);
}
