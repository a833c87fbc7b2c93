import type { Link } from '../links/link.ts';
import type { HostedDevice } from './pty.ts';

// A Link to a simulated device in this process: what sim://<channel> opens. Bytes cross
// asynchronously (setImmediate), as from a real stream, never re-entrantly. `onShut` runs once
// when the link goes, closed by the host or shut by the simulator (a dropped link).

export interface InProcessLink {
  link: Link;
  /** Ends the link from the device's side (the simulator dropped it). */
  shut(reason: string): void;
}

export function inProcessLink(device: HostedDevice, description: string, onShut: (reason: string) => void): InProcessLink {
  const dataListeners: ((chunk: Uint8Array) => void)[] = [];
  const closeListeners: ((reason: string) => void)[] = [];
  let closed: string | null = null;
  const shut = (reason: string) => {
    if (closed !== null) return;
    closed = reason;
    onShut(reason);
    for (const l of closeListeners.splice(0)) setImmediate(() => l(reason));
  };
  device.attachHost((bytes) => {
    const copy = bytes.slice();
    setImmediate(() => {
      if (closed === null) for (const l of dataListeners) l(copy);
    });
  });
  const link: Link = {
    kind: 'serial',
    description,
    write: async (data) => {
      if (closed !== null) throw new Error(`${description} is closed (${closed})`);
      const copy = data.slice();
      setImmediate(() => {
        if (closed === null) device.fromHost(copy);
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
  return { link, shut };
}
