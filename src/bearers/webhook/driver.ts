import { readFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { Bearer, BearerContext, BearerState, InboundFrame, OutboundFrame, SendResult } from '../bearer.ts';
import { DeviceError, errorText } from '../device-error.ts';
import { VERSION } from '../../lib/version.ts';
import { httpUrl, WebhookSettings } from './settings.ts';
import { excerpt, HEADER, jsonBody, partLabel, retryAfterMs, sign, templateBody } from './wire.ts';

// The webhook bearer (docs/webhooks.md): every delivery is one signed HTTP POST to the URL its
// destination names. It has no device: it is bound to `auto` and online while it runs. The
// answer decides the delivery: 2xx delivered; 429, 5xx, a timeout or a connection that failed
// retry with the delivery's backoff (no sooner than a Retry-After says); any other answer
// dead-letters with its status and the start of its body. Inbound hooks (routes.ts) hand what
// they are posted to the running bearer, which reports it as heard (`hear`).

/** node:https and node:tls, loaded when a webhook interface starts: loading them costs the
 *  process about 4 MiB of RSS (OpenSSL's TLS set-up), which a bridge without webhooks or TAK
 *  over TLS does not pay (docs/performance.md, "Memory and start-up"). */
function tlsModules() {
  return { https: process.getBuiltinModule('node:https'), tls: process.getBuiltinModule('node:tls') };
}

/** The device value a webhook interface is bound to: it has no device of its own. */
export const WEBHOOK_DEVICE = 'auto';

/** Webhook bearers running in this process, by interface id: the inbound hooks' way in. */
const running = new Map<string, WebhookBearer>();

export function runningWebhook(interfaceId: string): WebhookBearer | undefined {
  return running.get(interfaceId);
}

/** The start of an answer's body kept for a dead letter; the rest is read and dropped. */
const ANSWER_KEEP_BYTES = 4096;

export function createWebhookBearer(ctx: BearerContext): WebhookBearer {
  return new WebhookBearer(ctx);
}

interface Counters {
  sent: number;
  failed: number;
  retried: number;
  refused: number;
  heard: number;
}

export class WebhookBearer implements Bearer {
  readonly kind = 'webhook';
  readonly mtu: number;
  /** Requests may overlap: one slow receiver does not hold up the next delivery. */
  readonly concurrency = 4;
  readonly maxSendMs: number;
  readonly #ctx: BearerContext;
  readonly #settings: WebhookSettings;
  #online = false;
  #started = false;
  #stopped = false;
  #agents: { http: HttpAgent; https: HttpsAgent } | null = null;
  readonly #requests = new Set<{ abort(): void }>();
  readonly #counters: Counters = { sent: 0, failed: 0, retried: 0, refused: 0, heard: 0 };
  #lastStatus: number | null = null;
  #lastAnswerAt: string | null = null;

  constructor(ctx: BearerContext) {
    this.#ctx = ctx;
    this.#settings = WebhookSettings.parse(ctx.settings);
    this.mtu = this.#settings.mtu;
    this.maxSendMs = (this.#settings.timeout_s + 5) * 1000;
  }

  async start(device: string): Promise<void> {
    if (this.#stopped || this.#started) return;
    this.#started = true;
    this.#state({ connected: false, lastError: null, phase: 'opening' });
    try {
      if (device !== WEBHOOK_DEVICE) {
        throw new DeviceError('ERR_WEBHOOK_DEVICE', `a webhook interface has no device: bind it to '${WEBHOOK_DEVICE}' (got ${JSON.stringify(device)}); its destinations are URLs`, { retryable: false, facts: { port: device } });
      }
      const ca = await this.#loadCa();
      if (this.#stopped) return;
      this.#agents = {
        http: new HttpAgent({ keepAlive: true }),
        https: new (tlsModules().https.Agent)({ keepAlive: true, ca, rejectUnauthorized: true }),
      };
    } catch (error) {
      const reason = error instanceof DeviceError && error.code === 'ERR_WEBHOOK_CA' ? 'config' : 'offline';
      this.#state({ connected: false, lastError: errorText(error), reason, phase: 'closed' });
      this.#ctx.log.warn('webhook_not_started', { error: errorText(error) });
      return;
    }
    this.#online = true;
    running.set(this.#ctx.interfaceId, this);
    this.#state({ connected: true, lastError: null, phase: 'online' });
  }

  async stop(): Promise<void> {
    // Stopping a bearer never started is nothing to report; once stopped it stays stopped.
    if (this.#stopped || !this.#started) return;
    this.#stopped = true;
    this.#online = false;
    if (running.get(this.#ctx.interfaceId) === this) running.delete(this.#ctx.interfaceId);
    for (const r of this.#requests) r.abort();
    this.#agents?.http.destroy();
    this.#agents?.https.destroy();
    this.#agents = null;
    this.#state({ connected: false, lastError: null, phase: 'closed' });
  }

  async send(frame: OutboundFrame): Promise<SendResult> {
    if (frame.payload.length > this.mtu) {
      return { ok: false, retryable: false, error: `ERR_WEBHOOK_TOO_LARGE: the payload is ${frame.payload.length} bytes; this interface's mtu is ${this.mtu}` };
    }
    if (!this.#online || !this.#agents) return { ok: false, retryable: true, error: 'ERR_WEBHOOK_OFFLINE: the webhook interface is not running' };
    const url = this.#resolve(frame.to);
    if (!url) {
      return { ok: false, retryable: false, error: `ERR_WEBHOOK_URL: destination ${JSON.stringify(frame.to)} is not an http:// or https:// URL${this.#settings.base_url ? '' : ' (and the interface has no base_url)'}` };
    }
    const now = this.#ctx.clock.now();
    const sentAt = new Date(now).toISOString();
    const s = this.#settings;
    const body = Buffer.from(s.template === null ? JSON.stringify(jsonBody(frame, sentAt)) : templateBody(s.template, frame, sentAt, /json/i.test(s.content_type)), 'utf8');
    const timestamp = Math.floor(now / 1000);
    const headers: Record<string, string> = {
      'content-type': s.template === null ? 'application/json' : s.content_type,
      'content-length': String(body.length),
      'user-agent': `fieldbridge/${VERSION}`,
      [HEADER.timestamp]: String(timestamp),
      [HEADER.signature]: sign(s.secret, timestamp, body),
      [HEADER.delivery]: frame.deliveryId,
      [HEADER.message]: frame.messageId,
      [HEADER.attempt]: String(frame.origin?.attempt ?? 1),
    };
    const part = partLabel(frame);
    if (part !== null) headers[HEADER.part] = part;
    const result = await this.#post(url, headers, body);
    this.#count(result);
    return result;
  }

  /** A message posted to one of this interface's hooks, reported as heard. False when the
   *  bearer is not running or the bridge could not store it. */
  async hear(frame: InboundFrame): Promise<boolean> {
    if (!this.#online) return false;
    this.#counters.heard++;
    const answer = await this.#ctx.events.receive(frame);
    return answer !== false;
  }

  stats(): Record<string, unknown> {
    return { ...this.#counters, last_status: this.#lastStatus, last_answer_at: this.#lastAnswerAt };
  }

  #state(state: BearerState): void {
    this.#ctx.events.state(state);
  }

  /** The system's authorities, and the operator's CA file when one is set. */
  async #loadCa(): Promise<string[] | undefined> {
    const file = this.#settings.ca_file;
    if (file === null) return undefined;
    try {
      return [...tlsModules().tls.rootCertificates, await readFile(file, 'utf8')];
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new DeviceError('ERR_WEBHOOK_CA', `cannot read ca_file ${file}: ${(error as Error).message}`, { retryable: false, facts: { port: file, systemError: code } });
    }
  }

  #resolve(to: string): URL | null {
    const whole = httpUrl(to);
    if (whole) return whole;
    const base = this.#settings.base_url;
    if (base === null) return null;
    try {
      return httpUrl(new URL(to, base.endsWith('/') ? base : `${base}/`).toString());
    } catch {
      return null;
    }
  }

  #post(url: URL, headers: Record<string, string>, body: Buffer): Promise<SendResult> {
    const agents = this.#agents!;
    const https = url.protocol === 'https:';
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const done = (r: SendResult) => {
        if (settled) return;
        settled = true;
        this.#ctx.clock.clearTimeout(timer);
        this.#requests.delete(handle);
        resolve(r);
      };
      const req = (https ? tlsModules().https.request : httpRequest)(url, { method: 'POST', headers, agent: https ? agents.https : agents.http }, (res) => {
        this.#readAnswer(res).then((answer) => done(this.#verdict(res, answer)), (error: Error) => done(this.#lost(`the answer broke off: ${error.message}`)));
      });
      const handle = { abort: () => req.destroy(new Error('the interface stopped')) };
      this.#requests.add(handle);
      const timer = this.#ctx.clock.setTimeout(() => {
        req.destroy(new Error('timeout'));
        done(this.#lost(`no answer within ${this.#settings.timeout_s} s`));
      }, this.#settings.timeout_s * 1000);
      req.on('error', (error: NodeJS.ErrnoException) => done(this.#lost(error.code ? `${error.code}: ${error.message}` : error.message, error.code)));
      req.end(body);
    });
  }

  /** The start of the answer's body; the rest is read and dropped, so the connection is kept. */
  #readAnswer(res: IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (chunk: Buffer) => {
        if (kept >= ANSWER_KEEP_BYTES) return;
        chunks.push(chunk.subarray(0, ANSWER_KEEP_BYTES - kept));
        kept += Math.min(chunk.length, ANSWER_KEEP_BYTES - kept);
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
      // Closed before the whole answer came: the receiver went away mid-answer.
      res.on('close', () => {
        if (!res.complete) reject(new Error('the connection closed before the answer was complete'));
      });
    });
  }

  /** What the receiver's answer means for the delivery. */
  #verdict(res: IncomingMessage, answer: Buffer): SendResult {
    const status = res.statusCode ?? 0;
    const now = this.#ctx.clock.now();
    this.#lastStatus = status;
    this.#lastAnswerAt = new Date(now).toISOString();
    const said = `${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`;
    const quote = excerpt(answer);
    const text = quote ? `${said}: ${quote}` : said;
    if (status >= 200 && status < 300) return { ok: true, meta: { http_status: status } };
    if (status === 429 || status >= 500) {
      const header = res.headers['retry-after'];
      const at = retryAfterMs(Array.isArray(header) ? header[0] : header, now);
      return { ok: false, retryable: true, error: `ERR_WEBHOOK_RETRY: the receiver answered ${text}`, ...(at === null ? {} : { retryAtMs: at }) };
    }
    return { ok: false, retryable: false, error: `ERR_WEBHOOK_REFUSED: the receiver answered ${text}` };
  }

  /** No answer (refused, reset, timed out, a certificate not trusted): retried, since a
   *  receiver that is down or renewing its certificate may be back by the next attempt. */
  #lost(why: string, code?: string): SendResult {
    const certificate = code !== undefined && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code);
    return { ok: false, retryable: true, error: certificate ? `ERR_WEBHOOK_TLS: the receiver's certificate was not accepted: ${why}` : `ERR_WEBHOOK_UNREACHABLE: ${why}` };
  }

  #count(r: SendResult): void {
    if (r.ok) this.#counters.sent++;
    else {
      this.#counters.failed++;
      if (r.retryable) this.#counters.retried++;
      else this.#counters.refused++;
    }
  }
}
