import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIPv4 } from 'node:net';
import { connect as tcpConnect, type Socket } from 'node:net';
import type { Clock } from '../../lib/clock.ts';
import { DeviceError } from '../device-error.ts';
import type { Link } from '../shared/links/link.ts';
import { formatPortValue, parsePortValue } from '../shared/links/port-value.ts';

// The three ways to a TAK network (docs/tak.md, "Connecting"): a TCP stream to a TAK server
// (tcp://host:8087), a TLS stream with a client certificate (tls://host:8089), and UDP
// datagrams to a multicast group the TAK clients on the LAN listen to (udp://239.2.3.1:6969)
// or to one host. Each is a Link (a byte stream for the stream decoder): one datagram is one
// chunk. The certificates are read by the driver (tls-files.ts) and handed over as PEM.

export interface TakTlsMaterial {
  cert: string;
  key: string;
  ca: string | undefined;
  passphrase: string | undefined;
}

export interface TakLinkOptions {
  clock: Clock;
  connectTimeoutMs: number;
  /** For tls://: the client certificate, its key and the server's CA. */
  tls: () => Promise<TakTlsMaterial>;
  /** For a multicast udp://: the local IPv4 address of the network interface to use (null: the system's choice) and the TTL. */
  multicastInterface: string | null;
  multicastTtl: number;
}

/** Past this many bytes waiting to be written, the TAK end is not reading: the link is dropped. */
export const MAX_WRITE_BACKLOG = 1_048_576;

export async function openTakLink(device: string, o: TakLinkOptions): Promise<Link> {
  const parsed = parsePortValue(device, { defaultTcpPort: 8087 });
  if (!parsed.ok) throw new DeviceError('ERR_PORT_VALUE', `port value ${parsed.error}`, { retryable: false });
  const v = parsed.value;
  if (v.kind === 'udp') return openUdp(v.host, v.port, formatPortValue(v), o);
  if (v.kind !== 'tcp' && v.kind !== 'tls') {
    throw new DeviceError('ERR_PORT_UNSUPPORTED', `a TAK interface connects to tcp://host:port, tls://host:port or udp://group:port, not ${device}`, { retryable: false, facts: { port: device } });
  }
  const material = v.kind === 'tls' ? await o.tls() : null;
  const description = formatPortValue(v);
  const socket: Socket = material
    // node:tls loaded only here: it costs about 4 MiB of RSS a bridge without TLS never pays.
    ? process.getBuiltinModule('node:tls').connect({ host: v.host, port: v.port, cert: material.cert, key: material.key, ca: material.ca, passphrase: material.passphrase, servername: isIPv4(v.host) ? undefined : v.host })
    : tcpConnect({ host: v.host, port: v.port });
  await new Promise<void>((resolve, reject) => {
    const timer = o.clock.setTimeout(() => {
      socket.destroy();
      reject(new DeviceError('ERR_TAK_CONNECT', `${description}: no connection within ${o.connectTimeoutMs} ms`, { retryable: true, facts: { port: description } }));
    }, o.connectTimeoutMs);
    socket.once(material ? 'secureConnect' : 'connect', () => {
      o.clock.clearTimeout(timer);
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      o.clock.clearTimeout(timer);
      socket.destroy();
      reject(new DeviceError('ERR_TAK_CONNECT', `${description}: ${error.code ? `${error.code}: ` : ''}${error.message}`, { retryable: true, facts: { port: description, systemError: error.code } }));
    });
  });
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 30_000);
  return streamLink(socket, description);
}

function streamLink(socket: Socket, description: string): Link {
  const closers: Array<(reason: string) => void> = [];
  let closed = false;
  const close = (reason: string) => {
    if (closed) return;
    closed = true;
    for (const l of closers) l(reason);
  };
  socket.on('error', (error: NodeJS.ErrnoException) => close(error.code ? `${error.code}: ${error.message}` : error.message));
  socket.on('close', () => close('the TAK end closed the connection'));
  return {
    kind: 'tcp',
    description,
    write: (data) => {
      if (closed) return Promise.reject(new DeviceError('ERR_TAK_OFFLINE', `${description} is closed`, { retryable: true }));
      if (socket.writableLength > MAX_WRITE_BACKLOG) {
        socket.destroy(new Error(`more than ${MAX_WRITE_BACKLOG} bytes waiting: the TAK end is not reading`));
        return Promise.reject(new DeviceError('ERR_TAK_OFFLINE', `${description} is not reading`, { retryable: true }));
      }
      // Handed to the socket: a write waits for no answer, so no one waits on a slow server.
      socket.write(data);
      return Promise.resolve();
    },
    onData: (listener) => socket.on('data', listener),
    onClose: (listener) => closers.push(listener),
    close: async () => {
      socket.destroy();
      close('closed by the bridge');
    },
  };
}

async function openUdp(host: string, port: number, description: string, o: TakLinkOptions): Promise<Link> {
  const multicast = isIPv4(host) && Number(host.split('.')[0]) >= 224 && Number(host.split('.')[0]) <= 239;
  const socket: UdpSocket = createSocket({ type: 'udp4', reuseAddr: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.close();
      reject(new DeviceError('ERR_TAK_CONNECT', `${description}: ${error.message}`, { retryable: true, facts: { port: description, systemError: error.code } }));
    });
    // A multicast group is listened to on its own port (every TAK client does the same); a
    // unicast peer is only sent to.
    socket.bind(multicast ? port : 0, () => resolve());
  });
  try {
    if (multicast) {
      socket.addMembership(host, o.multicastInterface ?? undefined);
      if (o.multicastInterface) socket.setMulticastInterface(o.multicastInterface);
      socket.setMulticastTTL(o.multicastTtl);
      socket.setMulticastLoopback(true);
    }
  } catch (error) {
    socket.close();
    throw new DeviceError('ERR_TAK_CONNECT', `${description}: cannot join the group: ${(error as Error).message}`, { retryable: true, facts: { port: description } });
  }
  const closers: Array<(reason: string) => void> = [];
  let closed = false;
  socket.on('error', (error) => {
    if (closed) return;
    closed = true;
    for (const l of closers) l(error.message);
  });
  return {
    kind: 'tcp', // Link.kind names byte streams; a datagram link says what it is in its description.
    description,
    write: (data) => new Promise<void>((resolve, reject) => {
      socket.send(data, port, host, (error) => (error ? reject(new DeviceError('ERR_TAK_SEND', `${description}: ${error.message}`, { retryable: true })) : resolve()));
    }),
    onData: (listener) => socket.on('message', (msg) => listener(msg)),
    onClose: (listener) => closers.push(listener),
    close: async () => {
      closed = true;
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
