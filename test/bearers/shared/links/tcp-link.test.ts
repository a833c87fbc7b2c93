import { createServer, type Server, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Link } from '../../../../src/bearers/shared/links/link.ts';
import { openTcpLink } from '../../../../src/bearers/shared/links/tcp-link.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { DeviceError } from '../../../../src/bearers/device-error.ts';
import { waitUntil } from './fixtures/pty.ts';

interface Board {
  server: Server;
  port: number;
  sockets: Socket[];
  received: Buffer;
}

async function board(): Promise<Board> {
  const b: Board = { server: createServer(), port: 0, sockets: [], received: Buffer.alloc(0) };
  b.server.on('connection', (s) => {
    b.sockets.push(s);
    s.on('data', (d) => (b.received = Buffer.concat([b.received, d])));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => b.server.listen(0, '127.0.0.1', r));
  b.port = (b.server.address() as { port: number }).port;
  return b;
}

const boards: Board[] = [];
const links: Link[] = [];
test.after.each(async () => {
  for (const l of links.splice(0)) await l.close();
  for (const b of boards.splice(0)) {
    for (const s of b.sockets) s.destroy();
    await new Promise((r) => b.server.close(r));
  }
});

async function connected(): Promise<{ b: Board; link: Link }> {
  const b = await board();
  boards.push(b);
  const link = await openTcpLink('127.0.0.1', b.port);
  links.push(link);
  await waitUntil(() => b.sockets.length === 1, 2000, 'server saw no connection');
  return { b, link };
}

test('carries bytes both ways and says where it goes', async () => {
  const { b, link } = await connected();
  assert.is(link.kind, 'tcp');
  assert.is(link.description, `tcp://127.0.0.1:${b.port}`);
  const heard: number[] = [];
  link.onData((c) => heard.push(...c));
  await link.write(Uint8Array.from([0xc0, 0x08, 0x73, 0xc0]));
  await waitUntil(() => b.received.length === 4, 2000, 'board heard nothing');
  b.sockets[0].write(Buffer.from([0xc0, 0x08, 0x46, 0xc0]));
  await waitUntil(() => heard.length === 4, 2000, 'bridge heard nothing');
  assert.equal(heard, [0xc0, 0x08, 0x46, 0xc0]);
});

test('the board closing the connection closes the link with a reason', async () => {
  const { b, link } = await connected();
  const reasons: string[] = [];
  link.onClose((r) => reasons.push(r));
  b.sockets[0].end();
  await waitUntil(() => reasons.length === 1, 2000, 'no close after the board hung up');
  assert.ok(reasons[0].includes('closed the connection'), reasons[0]);
});

test('the board dying (reset) closes the link with a reason, and writes are refused after', async () => {
  const { b, link } = await connected();
  const reasons: string[] = [];
  link.onClose((r) => reasons.push(r));
  b.sockets[0].resetAndDestroy();
  await new Promise((r) => b.server.close(r));
  await waitUntil(() => reasons.length === 1, 2000, 'no close after the board died');
  assert.ok(/reset|closed/.test(reasons[0]), reasons[0]);
  try {
    await link.write(Uint8Array.from([1]));
    assert.unreachable('write after close resolved');
  } catch (error) {
    assert.is((error as DeviceError).code, 'ERR_LINK_CLOSED');
  }
  boards.splice(boards.indexOf(b), 1);
});

test('close() reports "closed by the bridge"', async () => {
  const { link } = await connected();
  const reasons: string[] = [];
  link.onClose((r) => reasons.push(r));
  await link.close();
  assert.equal(reasons, ['closed by the bridge']);
});

test('connection refused is ERR_TCP_CONNECT naming the address', async () => {
  const b = await board();
  const port = b.port;
  await new Promise((r) => b.server.close(r));
  try {
    await openTcpLink('127.0.0.1', port);
    assert.unreachable('connected to a closed port');
  } catch (error) {
    assert.is((error as DeviceError).code, 'ERR_TCP_CONNECT');
    assert.ok((error as Error).message.includes(`127.0.0.1:${port}`) && (error as Error).message.includes('refused'), (error as Error).message);
  }
});

test('a board that never answers the connect times out on the (fake) clock', async () => {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737), never routed: no answer can beat the fake clock,
  // which moves past the timeout before the event loop runs again.
  const clock = new FakeClock();
  const opening = openTcpLink('192.0.2.1', 7633, { clock, connectTimeoutMs: 10_000 }).then(
    () => null,
    (e: DeviceError) => e,
  );
  assert.is(clock.pending(), 1);
  clock.advance(9_999);
  assert.is(clock.pending(), 1, 'gave up before the timeout');
  clock.advance(1);
  const error = await opening;
  assert.ok(error, 'connect succeeded');
  assert.is(error!.code, 'ERR_TCP_CONNECT');
  assert.ok(error!.message.includes('did not answer within 10000 ms'), error!.message);
  assert.is(clock.pending(), 0);
});

test.run();
