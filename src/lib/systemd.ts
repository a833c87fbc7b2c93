import { spawn } from 'node:child_process';
import type { Logger } from './log.ts';

// systemd readiness and watchdog (DESIGN.md section 4). Node has no unix datagram sockets, so
// it cannot write to NOTIFY_SOCKET itself; `systemd-notify` does it for us, which is why the
// units say NotifyAccess=all. Without NOTIFY_SOCKET (a terminal, a test) this does nothing.

export interface Notifier {
  ready(status?: string): void;
  stopping(): void;
  /** Stops the watchdog timer. */
  close(): void;
}

export function systemdNotifier(env: NodeJS.ProcessEnv, log: Logger): Notifier {
  if (!env.NOTIFY_SOCKET) return { ready() {}, stopping() {}, close() {} };
  const send = (...args: string[]) => {
    const child = spawn('systemd-notify', args, { stdio: 'ignore', env });
    child.on('error', (e) => log.warn('systemd_notify_failed', { error: e.message, args: args.join(' ') }));
  };
  let watchdog: ReturnType<typeof setInterval> | undefined;
  const usec = Number(env.WATCHDOG_USEC);
  if (Number.isFinite(usec) && usec > 0) {
    // Ping at half the interval from a timer on the main loop: if the loop blocks, pings
    // stop and systemd restarts us.
    watchdog = setInterval(() => send('WATCHDOG=1'), Math.max(500, Math.floor(usec / 2000)));
    watchdog.unref();
  }
  return {
    ready: (status = 'serving') => send('--ready', `--status=${status}`),
    stopping: () => send('--stopping'),
    close: () => {
      if (watchdog) clearInterval(watchdog);
    },
  };
}
