import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import { VERSION } from '../../lib/version.ts';
import { errorText } from '../device-error.ts';
import type { Link } from '../shared/links/link.ts';
import { openTcpLink } from '../shared/links/tcp-link.ts';
import { serverAddress } from './settings.ts';

// One APRS-IS client connection (docs/protocols/aprs.md 3): log in with the callsign, passcode
// and filter, read TNC2 lines, write packets once verified, and keep the connection alive: a
// comment line every few minutes, and a reconnect (with growing pauses) when the server is
// silent for two minutes (servers send a comment every 20 s) or the connection drops.

export const IS_SILENCE_MS = 120_000;
export const IS_KEEPALIVE_MS = 240_000;
const BACKOFF = { initialMs: 5_000, maxMs: 300_000 };

export interface AprsIsOptions {
  server: string;
  callsign: string;
  /** null: read-only (`pass -1`). */
  passcode: string | null;
  filter: string | null;
  clock: Clock;
  log: Logger;
  onLine(line: string): void;
  onState(state: { connected: boolean; verified: boolean; error: string | null }): void;
}

/** The login line, without its CR LF. */
export function loginLine(callsign: string, passcode: string | null, filter: string | null): string {
  return `user ${callsign} pass ${passcode ?? '-1'} vers fieldbridge ${VERSION}${filter ? ` filter ${filter}` : ''}`;
}

export class AprsIsClient {
  readonly #o: AprsIsOptions;
  #link: Link | null = null;
  #stopped = false;
  #verified = false;
  #pause = BACKOFF.initialMs;
  #retry: TimerHandle | null = null;
  #silence: TimerHandle | null = null;
  #keepalive: TimerHandle | null = null;
  #rest = '';
  serverName: string | null = null;
  linesIn = 0;
  linesOut = 0;

  constructor(options: AprsIsOptions) {
    this.#o = options;
  }

  get verified(): boolean {
    return this.#verified && this.#link !== null;
  }

  get connected(): boolean {
    return this.#link !== null;
  }

  start(): void {
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearTimers();
    const link = this.#link;
    this.#link = null;
    await link?.close().catch(() => {});
  }

  /** Sends one packet line; false when not logged in with a verified passcode. */
  send(line: string): boolean {
    if (!this.verified || !this.#link) return false;
    this.linesOut++;
    this.#link.write(new TextEncoder().encode(`${line}\r\n`)).catch(() => {});
    return true;
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const { host, port } = serverAddress(this.#o.server);
    let link: Link;
    try {
      link = await openTcpLink(host, port, { clock: this.#o.clock });
    } catch (error) {
      this.#down(`APRS-IS ${this.#o.server}: ${errorText(error)}`);
      return;
    }
    if (this.#stopped) {
      await link.close().catch(() => {});
      return;
    }
    this.#link = link;
    this.#verified = false;
    this.#rest = '';
    link.onData((chunk) => this.#data(chunk));
    link.onClose((reason) => {
      if (this.#link !== link) return;
      this.#link = null;
      this.#down(`APRS-IS ${this.#o.server} closed the connection: ${reason}`);
    });
    this.#armSilence();
    this.#armKeepalive();
    await link.write(new TextEncoder().encode(`${loginLine(this.#o.callsign, this.#o.passcode, this.#o.filter)}\r\n`)).catch(() => {});
    this.#o.onState({ connected: true, verified: false, error: null });
  }

  #data(chunk: Uint8Array): void {
    this.#armSilence();
    const text = this.#rest + new TextDecoder().decode(chunk);
    const lines = text.split('\n');
    this.#rest = lines.pop() ?? '';
    if (this.#rest.length > 4096) this.#rest = '';
    for (const raw of lines) {
      const line = raw.replace(/\r$/, '');
      if (line === '') continue;
      this.linesIn++;
      const resp = /^# logresp (\S+) (verified|unverified)(?:, server (\S+))?/.exec(line);
      if (resp) {
        this.#verified = resp[2] === 'verified';
        this.serverName = resp[3] ?? null;
        this.#pause = BACKOFF.initialMs;
        this.#o.onState({ connected: true, verified: this.#verified, error: this.#verified || this.#o.passcode === null ? null : 'APRS-IS did not accept the passcode: logged in read-only' });
        continue;
      }
      if (line.startsWith('#')) continue;
      this.#o.onLine(line);
    }
  }

  #down(error: string): void {
    this.#clearTimers();
    this.#verified = false;
    if (this.#stopped) return;
    this.#o.log.warn('aprs_is_down', { error, retry_in_ms: this.#pause });
    this.#o.onState({ connected: false, verified: false, error });
    this.#retry = this.#o.clock.setTimeout(() => {
      this.#retry = null;
      void this.#connect();
    }, this.#pause);
    this.#pause = Math.min(this.#pause * 2, BACKOFF.maxMs);
  }

  #armSilence(): void {
    if (this.#silence) this.#o.clock.clearTimeout(this.#silence);
    this.#silence = this.#o.clock.setTimeout(() => {
      const link = this.#link;
      this.#link = null;
      void link?.close().catch(() => {});
      this.#down(`APRS-IS ${this.#o.server} was silent for ${IS_SILENCE_MS / 1000} s`);
    }, IS_SILENCE_MS);
  }

  #armKeepalive(): void {
    if (this.#keepalive) this.#o.clock.clearTimeout(this.#keepalive);
    this.#keepalive = this.#o.clock.setTimeout(() => {
      this.#keepalive = null;
      if (!this.#link) return;
      void this.#link.write(new TextEncoder().encode('#keepalive\r\n')).catch(() => {});
      this.#armKeepalive();
    }, IS_KEEPALIVE_MS);
  }

  #clearTimers(): void {
    for (const t of [this.#retry, this.#silence, this.#keepalive]) if (t) this.#o.clock.clearTimeout(t);
    this.#retry = this.#silence = this.#keepalive = null;
  }
}
