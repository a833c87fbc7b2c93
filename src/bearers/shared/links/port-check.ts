import { randomBytes } from 'node:crypto';
import { StartupError } from '../../../lib/errors.ts';

// `fieldbridge ports --check PATH [--peer PATH2]`: opens serial paths through the real
// serialport native binding and passes a probe line, to prove the addon inside the shipped
// executable loads and works and, on a gateway, that an adapter passes
// bytes. Without --peer the probe must come back on PATH itself (a TX-RX loopback jumper);
// with --peer it travels PATH -> PEER and then PEER -> PATH (a null-modem cable, or a socat
// pty pair in the smoke test). It writes to the device: not for a port a radio is using.

export interface PortCheckResult {
  ok: boolean;
  /** One line per direction tried, e.g. "/dev/pts/3 -> /dev/pts/4: 40 bytes in 2 ms". */
  lines: string[];
}

interface OpenPort {
  write(data: Buffer): Promise<void>;
  /** Resolves true once `expected` has arrived (possibly in pieces), false after timeoutMs. */
  expect(expected: Buffer, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function checkSerialPaths(path: string, peer: string | undefined, timeoutMs = 3000): Promise<PortCheckResult> {
  // Loaded here, not at the top: only this command needs the native addon. The executable
  // writes it out first (src/lib/serialport-addon.ts); its errors say what to fix, so they are
  // printed alone, not as a stack trace.
  let SerialPort: typeof import('serialport').SerialPort;
  try {
    ({ SerialPort } = await import('serialport'));
  } catch (error) {
    throw new StartupError(`serial ports cannot be used: ${(error as Error).message}`);
  }
  const open = (p: string) =>
    new Promise<OpenPort>((resolve, reject) => {
      const port = new SerialPort({ path: p, baudRate: 115200, autoOpen: false });
      let received = Buffer.alloc(0);
      let waiter: (() => void) | undefined;
      port.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        waiter?.();
      });
      port.on('error', () => {}); // reported through open/write callbacks instead
      port.open((error) => {
        if (error) return reject(new Error(`cannot open ${p}: ${error.message}`));
        resolve({
          write: (data) => new Promise((ok, fail) => port.write(data, (e) => (e ? fail(new Error(`cannot write to ${p}: ${e.message}`)) : port.drain(() => ok())))),
          expect: (expected, ms) =>
            new Promise((done) => {
              const check = () => {
                if (received.includes(expected)) finish(true);
              };
              const timer = setTimeout(() => finish(false), ms);
              const finish = (result: boolean) => {
                clearTimeout(timer);
                waiter = undefined;
                received = Buffer.alloc(0);
                done(result);
              };
              waiter = check;
              check();
            }),
          close: () => new Promise((done) => (port.isOpen ? port.close(() => done()) : done())),
        });
      });
    });

  const lines: string[] = [];
  const opened: OpenPort[] = [];
  try {
    const a = await open(path);
    opened.push(a);
    const b = peer ? await open(peer) : a;
    if (peer) opened.push(b);
    const directions: Array<[OpenPort, OpenPort, string]> = peer ? [[a, b, `${path} -> ${peer}`], [b, a, `${peer} -> ${path}`]] : [[a, a, `${path} -> ${path} (loopback)`]];
    let ok = true;
    for (const [from, to, name] of directions) {
      const probe = Buffer.from(`fieldbridge-port-check ${randomBytes(8).toString('hex')}\n`);
      const started = Date.now();
      const arrived = to.expect(probe, timeoutMs);
      await from.write(probe);
      if (await arrived) {
        lines.push(`${name}: ${probe.length} bytes in ${Date.now() - started} ms`);
      } else {
        ok = false;
        lines.push(`${name}: the ${probe.length}-byte probe did not arrive within ${timeoutMs} ms`);
      }
    }
    return { ok, lines };
  } catch (error) {
    lines.push((error as Error).message);
    return { ok: false, lines };
  } finally {
    for (const p of opened) await p.close();
  }
}
