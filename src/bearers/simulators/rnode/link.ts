import type { Link } from '../../links/link.ts';
import { RNodeChannel } from './channel.ts';
import { RNodeSimulator, type RNodeSimOptions } from './simulator.ts';

// sim://<channel> for RNode interfaces (docs/design.md section 6): each open makes one simulated
// RNode, in this process, on the named channel, and returns a Link to it. Two interfaces
// bound to sim://lab hear each other. No socket or pty: for demos and whole-bridge tests.
// Bytes cross asynchronously (setImmediate), as from a real stream, never re-entrantly.

const channels = new Map<string, RNodeChannel>();

export function rnodeSimChannel(name: string): RNodeChannel {
  let channel = channels.get(name);
  if (!channel) {
    channel = new RNodeChannel();
    channels.set(name, channel);
  }
  return channel;
}

export interface RNodeSimLink extends Link {
  /** The radio behind the link (tests inspect its config and counters or inject faults). */
  readonly sim: RNodeSimulator;
}

let opened = 0;

export async function openRNodeSimLink(channelName: string, options: Omit<RNodeSimOptions, 'channel'> = {}): Promise<RNodeSimLink> {
  const sim = new RNodeSimulator({ name: `${channelName}-${++opened}`, ...options, channel: rnodeSimChannel(channelName) });
  const dataListeners: ((chunk: Uint8Array) => void)[] = [];
  const closeListeners: ((reason: string) => void)[] = [];
  let closed: string | null = null;
  const shut = (reason: string) => {
    if (closed !== null) return;
    closed = reason;
    sim.close();
    for (const l of closeListeners.splice(0)) setImmediate(() => l(reason));
  };
  sim.attachHost((bytes) => {
    const copy = bytes.slice();
    setImmediate(() => {
      if (closed === null) for (const l of dataListeners) l(copy);
    });
  });
  return {
    kind: 'serial',
    description: `sim://${channelName}`,
    sim,
    write: async (data) => {
      if (closed !== null) throw new Error(`sim://${channelName} is closed (${closed})`);
      const copy = data.slice();
      setImmediate(() => {
        if (closed === null) sim.fromHost(copy);
      });
    },
    onData: (l) => void dataListeners.push(l),
    onClose: (l) => {
      if (closed !== null) setImmediate(() => l(closed!));
      else closeListeners.push(l);
    },
    close: async () => {
      // Bytes written before close() still arrive, as a serial driver flushes them.
      await new Promise((resolve) => setImmediate(resolve));
      shut('closed by the bridge');
    },
  };
}
