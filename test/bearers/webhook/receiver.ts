import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

// A real HTTP(S) server for the webhook tests: it records every request (headers, body, when)
// and answers from a script per path (the last answer repeats). The TLS variant serves a
// certificate for 127.0.0.1 signed by a certificate authority made with openssl at test time.

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answers this much later (a receiver too slow for the interface's timeout_s). */
  delayMs?: number;
}

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** performance.now() when the request was complete. */
  atMs: number;
}

export interface Receiver {
  url: string;
  requests: Received[];
  /** The answers for a path, in order; the last one repeats. Default: 200. */
  script(path: string, answers: Answer[]): void;
  close(): Promise<void>;
}

export interface TestCa {
  caFile: string;
  key: Buffer;
  cert: Buffer;
}

/** A CA and a server certificate for 127.0.0.1 (subjectAltName IP), made by openssl in `dir`. */
export function makeTestCa(dir: string): TestCa {
  const p = (name: string) => join(dir, name);
  const ossl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.pem'), '-days', '30', '-subj', '/CN=fieldbridge test CA');
  ossl('req', ...ec, '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(p('server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n');
  ossl('x509', '-req', '-in', p('server.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-out', p('server.pem'), '-days', '30', '-extfile', p('server.ext'));
  return { caFile: p('ca.pem'), key: readFileSync(p('server.key')), cert: readFileSync(p('server.pem')) };
}

export async function startReceiver(tls?: TestCa): Promise<Receiver> {
  const requests: Received[] = [];
  const scripts = new Map<string, Answer[]>();
  const served = new Map<string, number>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      requests.push({ path, headers: req.headers, body: Buffer.concat(chunks), atMs: performance.now() });
      const answers = scripts.get(path) ?? [{ status: 200 }];
      const n = served.get(path) ?? 0;
      served.set(path, n + 1);
      const a = answers[Math.min(n, answers.length - 1)];
      const answer = () => void (res.destroyed || res.writeHead(a.status, a.headers).end(a.body ?? ''));
      if (a.delayMs) setTimeout(answer, a.delayMs);
      else answer();
    });
  };
  const server: Server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handle) : createHttpServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    script: (path, answers) => void scripts.set(path, answers),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}
