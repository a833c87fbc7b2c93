import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

// Runs the real `fieldbridge` command (src/main.ts on this Node) as a child process.

export const ROOT = join(import.meta.dirname, '..', '..');
export const MAIN = join(ROOT, 'src', 'main.ts');

export function runCommand(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface BridgeProcess {
  child: ChildProcess;
  url: string;
  lines: any[];
  exited: Promise<number | null>;
  /** Resolves with the first log line whose event matches. */
  waitFor(event: string, timeoutMs?: number): Promise<any>;
}

/** Starts `fieldbridge [args]` with JSON logs and resolves once it listens (or an event). */
export async function startProcess(args: string[], env: Record<string, string>, readyEvent = 'bridge_listening'): Promise<BridgeProcess> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, SERVICE_LOG_FORMAT: 'json', HUB_LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: any[] = [];
  const waiters: Array<{ event: string; resolve: (l: any) => void }> = [];
  let buffer = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.on('data', (d) => {
    buffer += d;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let line: any;
      try {
        line = JSON.parse(text);
      } catch {
        line = { event: 'raw', text };
      }
      lines.push(line);
      for (const w of waiters.filter((w) => w.event === line.event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = (event: string, timeoutMs = 15_000) =>
    new Promise<any>((resolve, reject) => {
      const seen = lines.find((l) => l.event === event);
      if (seen) return resolve(seen);
      const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms; stderr: ${stderr}; log: ${JSON.stringify(lines)}`)), timeoutMs);
      waiters.push({ event, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      exited.then((code) => reject(new Error(`process exited (${code}) before ${event}; stderr: ${stderr}`)));
    });
  const ready = await waitFor(readyEvent);
  return { child, url: ready.url ?? '', lines, exited, waitFor };
}
