import { readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock, type TimerHandle } from '../../../lib/clock.ts';
import { MAX_MT_BYTES } from './gateway.ts';

// `fieldbridge sim iridium --inbox DIR`: a folder standing in for the Rock7 web service that
// queues MT messages. Every file dropped in becomes one MT message (its bytes, as they are)
// and is removed once queued; a file of more than 270 bytes (iridium-sbd.md 3.6) or an empty
// one is refused and renamed `<name>.rejected`. Polled through the clock, in name order.
// Files whose names start with "." are left alone: write one as a dotfile and rename it into
// place, so a half-written file is never taken.

export interface InboxWatch {
  /** Looks at the folder now (also what every poll does). */
  poll(): void;
  stop(): void;
}

export interface InboxOptions {
  clock?: Clock;
  /** Between looks (default 500 ms). */
  pollMs?: number;
  /** Queues one message; may throw (the file is then renamed `.rejected`). */
  queue(bytes: Uint8Array, name: string): void;
  write(line: string): void;
}

export function watchInbox(dir: string, options: InboxOptions): InboxWatch {
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? 500;
  let timer: TimerHandle | null = null;
  let stopped = false;

  const reject = (name: string, why: string) => {
    try {
      renameSync(join(dir, name), join(dir, `${name}.rejected`));
      options.write(`inbox: refused ${name}: ${why} (renamed ${name}.rejected)`);
    } catch (e) {
      options.write(`inbox: refused ${name}: ${why}; could not rename it: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  const poll = () => {
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile() && !e.name.startsWith('.') && !e.name.endsWith('.rejected'))
        .map((e) => e.name)
        .sort();
    } catch (e) {
      options.write(`inbox: cannot read ${dir}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    for (const name of names) {
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(readFileSync(join(dir, name)));
      } catch {
        continue; // gone meanwhile
      }
      if (bytes.length === 0 || bytes.length > MAX_MT_BYTES) {
        reject(name, `${bytes.length} bytes, expected 1 to ${MAX_MT_BYTES}`);
        continue;
      }
      try {
        options.queue(bytes, name);
      } catch (e) {
        reject(name, e instanceof Error ? e.message : String(e));
        continue;
      }
      try {
        unlinkSync(join(dir, name));
      } catch {
        // queued already; a file that cannot be removed would be queued again at the next look
        options.write(`inbox: could not remove ${name}; stopping the inbox`);
        return stop();
      }
    }
  };

  const arm = () => {
    if (stopped) return;
    timer = clock.setTimeout(() => {
      poll();
      arm();
    }, pollMs);
  };
  const stop = () => {
    stopped = true;
    if (timer) clock.clearTimeout(timer);
    timer = null;
  };
  arm();
  return { poll, stop };
}
