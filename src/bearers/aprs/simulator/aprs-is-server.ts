import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { aprsIsPasscode } from '../settings.ts';

// An APRS-IS server stand-in (docs/protocols/aprs.md 3), for tests and trying the bridge: it
// greets with a comment, checks the login line's passcode, answers `# logresp`, keeps what
// verified clients send (with `qAC,<server>` appended, as a server does), drops packets from
// unverified ones, and hands every client the lines a test injects. A comment every
// `keepaliveMs` keeps clients' silence watch quiet.

export interface IsLogin {
  line: string;
  callsign: string;
  passcode: string;
  filter: string | null;
  verified: boolean;
}

export const SIM_SERVER_NAME = 'FBSIMIS';

export class AprsIsStandIn extends EventEmitter {
  readonly logins: IsLogin[] = [];
  /** Packet lines from verified clients, as the server passes them on. */
  readonly received: string[] = [];
  /** Packet lines dropped because their client was not verified. */
  readonly dropped: string[] = [];
  readonly #clients = new Set<Socket>();
  #server: Server | null = null;
  #keepalive: ReturnType<typeof setInterval> | null = null;

  async listen(port = 0, host = '127.0.0.1', keepaliveMs = 20_000): Promise<number> {
    this.#server = createServer((socket) => this.#client(socket));
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject);
      this.#server!.listen(port, host, () => resolve());
    });
    this.#keepalive = setInterval(() => this.#broadcast(`# ${SIM_SERVER_NAME} keepalive`), keepaliveMs);
    this.#keepalive.unref();
    return (this.#server.address() as AddressInfo).port;
  }

  /** A line every client receives (a packet from the internet). */
  inject(line: string): void {
    this.#broadcast(line);
  }

  /** Ends every client connection (a server restart). */
  dropClients(): void {
    for (const c of this.#clients) c.destroy();
    this.#clients.clear();
  }

  async close(): Promise<void> {
    if (this.#keepalive) clearInterval(this.#keepalive);
    this.dropClients();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #broadcast(line: string): void {
    for (const c of this.#clients) c.write(`${line}\r\n`);
  }

  #client(socket: Socket): void {
    this.#clients.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => this.#clients.delete(socket));
    socket.on('error', () => {});
    socket.write(`# fieldbridge APRS-IS stand-in ${SIM_SERVER_NAME}\r\n`);
    let login: IsLogin | null = null;
    let rest = '';
    socket.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const raw of lines) {
        const line = raw.replace(/\r$/, '');
        if (login === null) {
          login = this.#login(line);
          if (!login) {
            socket.destroy();
            return;
          }
          socket.write(`# logresp ${login.callsign} ${login.verified ? 'verified' : 'unverified'}, server ${SIM_SERVER_NAME}\r\n`);
          continue;
        }
        if (line === '' || line.startsWith('#')) continue;
        if (!login.verified) {
          this.dropped.push(line);
          continue;
        }
        const colon = line.indexOf(':');
        const passed = colon < 0 ? line : /,qA[A-Z],/.test(line.slice(0, colon)) ? line : `${line.slice(0, colon)},qAC,${SIM_SERVER_NAME}${line.slice(colon)}`;
        this.received.push(passed);
        this.emit('packet', passed);
      }
    });
  }

  #login(line: string): IsLogin | null {
    const m = /^user (\S+) pass (-?\d+)(?: vers \S+ \S+)?(?: filter (.*))?$/.exec(line);
    if (!m) return null;
    const login: IsLogin = { line, callsign: m[1], passcode: m[2], filter: m[3] ?? null, verified: m[2] !== '-1' && Number(m[2]) === aprsIsPasscode(m[1]) };
    this.logins.push(login);
    this.emit('login', login);
    return login;
  }
}
