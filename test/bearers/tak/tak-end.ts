import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';

// A stand-in TAK server for tests: a real TCP or TLS listener (client certificate required,
// as a TAK server's 8089 does) that keeps every event it is sent, split at `</event>` on its
// own, and can write events to its clients. The certificates are made by openssl at test time.

export interface TakEnd {
  port: number;
  events: string[];
  clients: Set<Socket>;
  write(xml: string): void;
  close(): Promise<void>;
}

export async function takEnd(tls?: { cert: string; key: string; ca: string }, options: { port?: number; onEvent?: (xml: string) => void } = {}): Promise<TakEnd> {
  const events: string[] = [];
  const clients = new Set<Socket>();
  const onSocket = (socket: Socket) => {
    clients.add(socket);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      for (let end = text.indexOf('</event>'); end >= 0; end = text.indexOf('</event>')) {
        events.push(text.slice(0, end + 8).trim());
        options.onEvent?.(events[events.length - 1]);
        text = text.slice(end + 8);
      }
    });
    socket.on('close', () => clients.delete(socket));
    socket.on('error', () => {});
  };
  const server: Server = tls
    ? createTlsServer({ cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true }, onSocket)
    : createServer(onSocket);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    events,
    clients,
    write: (xml) => {
      for (const c of clients) c.write(xml);
    },
    close: async () => {
      for (const c of clients) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A test CA, a server certificate for 127.0.0.1 and a client certificate valid `clientDays`
 *  days, as files in a temporary directory. */
export function testPki(clientDays: number): { dir: string; ca: string; serverCert: string; serverKey: string; clientCert: string; clientKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fb-tak-pki-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '30', '-subj', '/CN=Test TAK CA');
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [name, days, cn, ext] of [['server', 30, 'takserver', true], ['client', clientDays, 'fieldbridge', false]] as const) {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${cn}`);
    ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f(`${name}.pem`), '-days', String(days), ...(ext ? ['-extfile', f('server.ext')] : []));
  }
  return { dir, ca: f('ca.pem'), serverCert: f('server.pem'), serverKey: f('server.key'), clientCert: f('client.pem'), clientKey: f('client.key') };
}
