// The webhook bearer against the bearer contract (test/bearers/contract.ts). It has no device:
// the working device is `auto`, a missing one any other value (it does not retry). Its medium
// is HTTP: frames go to a real server in this process, which hands what it is posted to the
// peer's context as heard frames. The peer transmits the way an inbound hook does: its frame
// becomes a hook message, and the bearer under test hears it through hear(), the method the
// POST /api/hooks/{name} route calls (the route itself, with its tokens, is tested in
// hooks.test.ts).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { createWebhookBearer, type WebhookBearer } from '../../../src/bearers/webhook/driver.ts';
import { frameOf, HookMessage } from '../../../src/bearers/webhook/routes.ts';
import { bearerContract, type ContractHarness } from '../contract.ts';

const readAll = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

let listener: BearerContext | null = null;
const server = createServer(async (req, res) => {
  const body = JSON.parse((await readAll(req)).toString('utf8'));
  const m = body.message;
  const payload = m.payload_base64 !== null ? new Uint8Array(Buffer.from(m.payload_base64, 'base64')) : new TextEncoder().encode(m.text);
  listener?.events.receive({ from: 'bridge', to: body.delivery.to, channel: m.channel, kind: m.kind, text: m.text, payload, meta: {} });
  res.writeHead(204).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
server.unref();
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/contract`;

let underTest: WebhookBearer | null = null;

const harness: ContractHarness = {
  settings: { secret: 'contract-secret-0123456789' },
  create: (ctx) => (underTest = createWebhookBearer(ctx)),
  workingDevice: async () => 'auto',
  missingDevice: async () => ({ device: '/dev/serial/by-id/does-not-exist' }),
  reconnects: false,
  destination: url,
  makePeer: async (_device, ctx) => {
    listener = ctx;
    return {
      send: async (frame) => {
        const message = HookMessage.parse(frame.text !== null ? { from: 'peer', text: frame.text } : { from: 'peer', payload_b64: Buffer.from(frame.payload).toString('base64') });
        const heard = await underTest?.hear(frameOf('contract', message));
        return heard ? { ok: true } : { ok: false, error: 'not heard', retryable: true };
      },
      expectedFrom: 'peer',
      close: async () => void (listener = null),
    };
  },
  cleanup: async () => {
    listener = null;
  },
};

bearerContract('webhook', harness).run();
