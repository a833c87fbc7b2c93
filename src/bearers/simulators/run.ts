import type { SimRunOptions } from '../driver-module.ts';
import type { SimTransport } from './pty.ts';

// The part every `fieldbridge sim <kind>` shares once its devices listen: run until SIGINT or
// SIGTERM (or the abort signal tests pass); SIGUSR1 drops every link and SIGUSR2 makes every
// device send garbage, to watch the bridge recover.

export interface RunningDevice {
  transport: SimTransport;
  sendGarbage(): void;
}

export async function runUntilStopped(devices: RunningDevice[], options: SimRunOptions, write: (line: string) => void): Promise<void> {
  const drop = () => {
    write('dropping every link (SIGUSR1)');
    for (const d of devices) void d.transport.dropLink();
  };
  const garbage = () => {
    write('sending garbage (SIGUSR2)');
    for (const d of devices) d.sendGarbage();
  };
  let stop = () => {};
  await new Promise<void>((resolve) => {
    stop = resolve;
    if (options.signal) {
      if (options.signal.aborted) return resolve();
      options.signal.addEventListener('abort', stop, { once: true });
      return;
    }
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.on('SIGUSR1', drop);
    process.on('SIGUSR2', garbage);
  });
  for (const [name, listener] of [['SIGINT', stop], ['SIGTERM', stop], ['SIGUSR1', drop], ['SIGUSR2', garbage]] as const) process.off(name, listener);
}
