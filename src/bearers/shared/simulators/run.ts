import type { SimRunOptions, SimValues } from '../../driver-module.ts';
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

/** A usage mistake in `fieldbridge sim <kind>` arguments (exit 2 with the usage). */
export class SimUsageError extends Error {}

export type SimTarget = { kind: 'tcp'; host: string; port: number } | { kind: 'pty'; path: string };

/** The values of a repeatable option as strings. */
export function optionList(v: unknown): string[] {
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).map(String);
}

/** Where the devices listen: every --tcp HOST:PORT and --pty PATH, at least one. */
export function parseTargets(values: Record<string, unknown>, examples: { tcp: string; pty: string }): SimTarget[] {
  const targets: SimTarget[] = [];
  for (const t of optionList(values.tcp)) {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(t);
    if (!m || Number(m[3]) > 65535) throw new SimUsageError(`--tcp ${JSON.stringify(t)}: expected HOST:PORT, for example ${examples.tcp}`);
    targets.push({ kind: 'tcp', host: m[1] ?? m[2], port: Number(m[3]) });
  }
  for (const p of optionList(values.pty)) {
    if (!p.startsWith('/')) throw new SimUsageError(`--pty ${JSON.stringify(p)}: expected an absolute path for the link, for example ${examples.pty}`);
    targets.push({ kind: 'pty', path: p });
  }
  if (targets.length === 0) throw new SimUsageError('give at least one --tcp HOST:PORT or --pty PATH');
  return targets;
}

/** A simulated device as `fieldbridge sim` runs it. */
export interface RunnableDevice {
  close(): void;
  sendGarbage(): void;
}

export interface ServedDevice<D extends RunnableDevice> {
  device: D;
  transport: SimTransport;
}

/**
 * One device per target, each made by `make` and served by `serve` (TCP or pty), then told
 * with `announce`. When one cannot be served, the ones already up are closed and the error is
 * thrown: a half-started simulator is never left running.
 */
export async function serveDevices<D extends RunnableDevice>(
  targets: SimTarget[],
  make: (index: number) => D,
  serve: (device: D, target: SimTarget) => Promise<SimTransport>,
  announce: (served: ServedDevice<D>) => void,
): Promise<ServedDevice<D>[]> {
  const served: ServedDevice<D>[] = [];
  try {
    for (const [i, target] of targets.entries()) {
      const device = make(i);
      let transport: SimTransport;
      try {
        transport = await serve(device, target);
      } catch (e) {
        device.close();
        throw e;
      }
      served.push({ device, transport });
      announce({ device, transport });
    }
  } catch (e) {
    await closeDevices(served);
    throw e;
  }
  return served;
}

export async function closeDevices(served: ServedDevice<RunnableDevice>[]): Promise<void> {
  for (const s of served) {
    await s.transport.close();
    s.device.close();
  }
}

/** Runs the served devices until stopped (runUntilStopped), then closes them. */
export async function runServed(served: ServedDevice<RunnableDevice>[], options: SimRunOptions, write: (line: string) => void): Promise<void> {
  options.onReady?.(served.map((s) => s.transport.device));
  await runUntilStopped(served.map((s) => ({ transport: s.transport, sendGarbage: () => s.device.sendGarbage() })), options, write);
  await closeDevices(served);
}

/** What one `fieldbridge sim <kind>` brings to runSimulator: how to make, serve and announce
 *  its devices, and anything to start once they listen (returns what to stop at the end). */
export interface SimulatorSetup<D extends RunnableDevice> {
  make(index: number): D;
  serve(device: D, target: SimTarget): Promise<SimTransport>;
  announce(served: ServedDevice<D>): void;
  started?(served: ServedDevice<D>[]): (() => void) | void;
}

/**
 * The whole of a `fieldbridge sim <kind>` run: the arguments parsed (a usage mistake is exit 2
 * with the usage), every device served (a device that cannot be is exit 1, the others closed),
 * then run until stopped (runServed). Returns the exit code: 0 after a clean stop.
 */
export async function runSimulator<P extends { targets: SimTarget[] }, D extends RunnableDevice>(
  values: SimValues,
  options: SimRunOptions,
  usage: string,
  parse: (values: SimValues) => P,
  setup: (plan: P, write: (line: string) => void) => SimulatorSetup<D>,
): Promise<number> {
  const write = options.write ?? ((line: string) => process.stdout.write(line + '\n'));
  let plan: P;
  try {
    plan = parse(values);
  } catch (e) {
    if (!(e instanceof SimUsageError)) throw e;
    write(`sim: ${e.message}\n${usage}`);
    return 2;
  }
  const kind = setup(plan, write);
  let served: ServedDevice<D>[];
  try {
    served = await serveDevices(plan.targets, kind.make, kind.serve, kind.announce);
  } catch (e) {
    write(`sim: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const stop = kind.started?.(served);
  await runServed(served, options, write);
  stop?.();
  write('stopped');
  return 0;
}
