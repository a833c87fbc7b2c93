import { spawn } from 'node:child_process';
import type { Logger } from './log.ts';

// systemd readiness and watchdog (docs/design.md section 4). Node has no unix datagram sockets, so
// it cannot write to NOTIFY_SOCKET itself; `systemd-notify` does it for us, which is why the
// units say NotifyAccess=all (the message comes from a child, not the main PID). Without
// NOTIFY_SOCKET (a terminal, a test) this does nothing.
//
// Only forms systemd 252 knows are used (Debian 12 and Raspberry Pi OS bookworm ship 252):
// `--ready`, `--status=` and plain assignments; `--stopping` only arrived in 253, so stopping
// is sent as the assignment STOPPING=1 (sd_notify(3)).

export interface Notifier {
  ready(status?: string): void;
  stopping(): void;
  /** Stops the watchdog timer. */
  close(): void;
}

/** Watchdog ping period in ms, or null when systemd asked for none (sd_watchdog_enabled(3)). */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid = process.pid): number | null {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  // WATCHDOG_PID names the process the watchdog is meant for; a child that inherited the
  // variables must not ping on its parent's behalf.
  if (env.WATCHDOG_PID && Number(env.WATCHDOG_PID) !== pid) return null;
  // Half the timeout, as sd_watchdog_enabled(3) recommends; the floor keeps a tiny value from
  // spawning a process in a tight loop.
  return Math.max(100, Math.floor(usec / 2000));
}

export function systemdNotifier(env: NodeJS.ProcessEnv, log: Logger): Notifier {
  if (!env.NOTIFY_SOCKET) return { ready() {}, stopping() {}, close() {} };
  let warned = false;
  const warnOnce = (fields: Record<string, unknown>) => {
    if (warned) return;
    warned = true;
    log.warn('systemd_notify_failed', { ...fields, effect: 'systemd may not see readiness or watchdog pings; is systemd-notify on PATH?' });
  };
  const send = (...args: string[]) => {
    const child = spawn('systemd-notify', args, { stdio: 'ignore', env });
    child.on('error', (e) => warnOnce({ error: e.message, args: args.join(' ') }));
    child.on('exit', (code) => {
      if (code) warnOnce({ exit_code: code, args: args.join(' ') });
    });
  };
  let watchdog: ReturnType<typeof setInterval> | undefined;
  const interval = watchdogIntervalMs(env);
  if (interval !== null) {
    // Pings come from a timer on the main loop: if the loop blocks, pings stop and systemd
    // restarts us (WatchdogSec= in the unit).
    watchdog = setInterval(() => send('WATCHDOG=1'), interval);
    watchdog.unref();
  }
  return {
    ready: (status = 'serving') => send('--ready', `--status=${status}`),
    stopping: () => send('STOPPING=1'),
    close: () => {
      if (watchdog) clearInterval(watchdog);
    },
  };
}

/**
 * Serves until SIGTERM or SIGINT, then tells systemd it is stopping and closes (in-flight work
 * bounded by 10 s). Resolves with the exit code: 0 after a clean close, 1 if closing failed.
 */
export function serveUntilSignal(log: Logger, notifier: Notifier, close: (graceMs: number) => Promise<void>, closing: string): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      log.info('signal_received', { signal, action: `finishing in-flight requests (at most 10 s), then ${closing}` });
      notifier.stopping();
      notifier.close();
      close(10_000).then(
        () => resolve(0),
        (e) => {
          log.error('shutdown_failed', { error: (e as Error).message });
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
