import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerState } from '../../../../src/bearers/bearer.ts';
import { DeviceSupervisor, type DeviceSupervisorOptions } from '../../../../src/bearers/shared/links/device-supervisor.ts';
import type { Link } from '../../../../src/bearers/shared/links/link.ts';
import { PortClaims } from '../../../../src/bearers/shared/links/port-claims.ts';
import { openLink } from '../../../../src/bearers/shared/links/open-link.ts';
import { FakeClock, type Clock } from '../../../../src/lib/clock.ts';
import { silentLogger } from '../../../../src/lib/log.ts';
import { answersDetect, count, DETECT_BURST, FakeDevice, PtyPair, rnodeProbe, waitUntil } from './fixtures/pty.ts';

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const cleanups: Array<() => Promise<unknown>> = [];
test.after.each(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => {});
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** A driver session: the detect exchange, failing after 1 s of fake time without an answer. */
const detectSession = (clock: Clock) => (link: Link) =>
  new Promise<void>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new Error('no answer to the detect burst within 1000 ms')), 1000);
    void rnodeProbe(link).then((ok) => {
      clock.clearTimeout(timer);
      if (ok) resolve();
      else reject(new Error('link closed during detect'));
    });
  });

function supervise(options: Partial<DeviceSupervisorOptions> & Pick<DeviceSupervisorOptions, 'device' | 'clock'>) {
  const states: BearerState[] = [];
  const claims = new PortClaims();
  const sup = new DeviceSupervisor({
    open: (d) => openLink(d, { resetWaitMs: 0, claims, clock: options.clock }),
    session: detectSession(options.clock),
    log: silentLogger,
    onState: (s) => states.push(s),
    ...options,
  });
  cleanups.unshift(() => sup.stop());
  const delay = () => sup.nextAttemptAt! - options.clock.now();
  return { sup, states, delay };
}

async function startPty(pair: PtyPair): Promise<FakeDevice> {
  await pair.start();
  const device = await FakeDevice.open(pair.devicePath);
  answersDetect(device);
  cleanups.push(() => device.close(), () => pair.stop());
  return device;
}

test('a pty board that is unplugged and plugged back is reconnected, with the reason shown meanwhile', async () => {
  const pair = new PtyPair(dir, 'replug');
  await startPty(pair);
  const clock = new FakeClock();
  const { sup, states, delay } = supervise({ device: pair.bridgePath, clock });
  sup.start();
  await waitUntil(() => sup.state.connected, 3000, 'never came online');
  assert.is(sup.state.phase, 'online');
  assert.ok(sup.link, 'the driver can reach the link while online');

  await pair.stop(); // unplug
  await waitUntil(() => !sup.state.connected, 3000, 'unplug not noticed');
  assert.is(sup.state.phase, 'backoff');
  assert.ok(sup.state.lastError!.includes('device gone'), sup.state.lastError!);
  assert.is(sup.link, null);
  assert.is(delay(), 1000);

  clock.advance(1000); // still unplugged: the path is missing
  await waitUntil(() => sup.state.phase === 'backoff' && sup.state.lastError!.includes('no device at'), 3000, 'retry did not report the missing device');
  assert.is(delay(), 2000);

  await startPty(pair); // plugged back in (another /dev/pts number behind the same link)
  clock.advance(2000);
  await waitUntil(() => sup.state.connected, 3000, 'did not reconnect');
  assert.equal(
    states.map((s) => s.phase),
    // The second 'opening' after the missing device: the device opened, its 'no device at' is over.
    ['opening', 'online', 'backoff', 'opening', 'backoff', 'opening', 'opening', 'online'],
  );

  await sup.stop();
  assert.equal(sup.state, { connected: false, lastError: null, phase: 'closed' });
  assert.is(clock.pending(), 0, 'a retry is still scheduled after stop');
});

test('a board answering garbage is retried with a growing, capped backoff and never online', async () => {
  const pair = await new PtyPair(dir, 'garbage').start();
  const device = await FakeDevice.open(pair.devicePath);
  cleanups.push(() => device.close(), () => pair.stop());
  device.respond((all, d) => {
    if (all.subarray(-DETECT_BURST.length).equals(Buffer.from(DETECT_BURST))) void d.write(Uint8Array.from([0xde, 0xad, 0xc0, 0xc0, 0xdb, 0x00]));
  });
  const clock = new FakeClock();
  const { sup, delay } = supervise({ device: pair.bridgePath, clock, backoff: { initialMs: 1000, maxMs: 4000 } });
  sup.start();
  const delays: number[] = [];
  for (let attempt = 1; attempt <= 4; attempt++) {
    await waitUntil(() => count(device.received, DETECT_BURST) === attempt, 3000, `attempt ${attempt} sent no detect burst`);
    clock.advance(1000); // the session's detect timeout
    await waitUntil(() => sup.state.phase === 'backoff', 3000, 'no backoff after a failed session');
    assert.is(sup.state.connected, false);
    assert.ok(sup.state.lastError!.includes('no answer to the detect burst'), sup.state.lastError!);
    delays.push(delay());
    clock.advance(delay());
  }
  assert.equal(delays, [1000, 2000, 4000, 4000]);
});

test('stop() while waiting to retry ends the retries; start() again brings it back', async () => {
  const clock = new FakeClock();
  const { sup } = supervise({ device: join(dir, 'absent'), clock });
  sup.start();
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'no backoff for a missing device');
  assert.is(clock.pending(), 1);
  await sup.stop();
  assert.is(clock.pending(), 0);
  clock.advance(120_000);
  assert.is(sup.state.phase, 'closed');
  sup.start();
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'start after stop did nothing');
});

test('stop() while a link is opening closes that link once it opens', async () => {
  const clock = new FakeClock();
  let release!: () => void;
  let closed = false;
  const link: Link = { kind: 'tcp', description: 'slow', write: async () => {}, onData() {}, onClose() {}, close: async () => void (closed = true) };
  const { sup } = supervise({
    device: 'tcp://slow',
    clock,
    open: () => new Promise((r) => (release = () => r(link))),
    session: async () => {},
  });
  sup.start();
  await sup.stop();
  release();
  await waitUntil(() => closed, 1000, 'the late link was left open');
  assert.is(sup.state.connected, false);
});

test('a port that was busy opens at the retry: its ERR_PORT_BUSY is not shown during the bring-up; a session failure is', async () => {
  const clock = new FakeClock();
  let closed: ((reason: string) => void) | undefined;
  const link: Link = { kind: 'tcp', description: 'freed', write: async () => {}, onData() {}, onClose: (fn) => void (closed = fn), close: async () => closed?.('closed by the bridge') };
  let opens = 0;
  let finishSession!: (error?: Error) => void;
  const { sup, states } = supervise({
    device: 'tcp://freed',
    clock,
    open: async () => {
      if (++opens === 1) throw Object.assign(new Error('/dev/ttyUSB0 is already used by interface mesh-a (ifc_a)'), { code: 'ERR_PORT_BUSY' });
      return link;
    },
    session: () => new Promise<void>((resolve, reject) => (finishSession = (e) => (e ? reject(e) : resolve()))),
  });
  sup.start();
  await waitUntil(() => sup.state.phase === 'backoff', 1000, 'the busy port was not reported');
  assert.match(sup.state.lastError ?? '', /already used by interface mesh-a/);
  clock.advance(1000);
  await waitUntil(() => finishSession !== undefined && opens === 2, 1000, 'no second open');
  assert.equal([sup.state.phase, sup.state.lastError], ['opening', null], 'the bring-up runs without the stale busy error');
  finishSession(new Error('no answer to the detect burst within 1000 ms'));
  await waitUntil(() => sup.state.phase === 'backoff', 1000, 'the session failure was not reported');
  assert.is(sup.state.lastError, 'no answer to the detect burst within 1000 ms');
  assert.ok(states.length > 0);
});

interface Board {
  server: Server;
  port: number;
  sockets: Socket[];
}
async function tcpBoard(): Promise<Board> {
  const b: Board = { server: createServer(), port: 0, sockets: [] };
  b.server.on('connection', (s) => {
    b.sockets.push(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => b.server.listen(0, '127.0.0.1', r));
  b.port = (b.server.address() as { port: number }).port;
  cleanups.push(async () => {
    for (const s of b.sockets) s.destroy();
    await new Promise((r) => b.server.close(r));
  });
  return b;
}

test('over TCP: a dropped connection is retried; a link that stayed up 30 s starts the backoff over', async () => {
  const b = await tcpBoard();
  const clock = new FakeClock();
  const { sup, delay } = supervise({ device: `tcp://127.0.0.1:${b.port}`, clock, session: async () => {} });
  sup.start();
  await waitUntil(() => sup.state.connected, 3000, 'tcp never online');

  b.sockets.at(-1)!.destroy(); // a short-lived connection: the backoff keeps growing
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'drop not noticed');
  assert.ok(sup.state.lastError!.includes(`127.0.0.1:${b.port}`), sup.state.lastError!);
  assert.is(delay(), 1000);
  clock.advance(1000);
  await waitUntil(() => sup.state.connected, 3000, 'no reconnect');
  b.sockets.at(-1)!.destroy();
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'second drop not noticed');
  assert.is(delay(), 2000);

  clock.advance(2000);
  await waitUntil(() => sup.state.connected, 3000, 'no second reconnect');
  clock.advance(30_000); // stable for 30 s
  b.sockets.at(-1)!.destroy();
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'third drop not noticed');
  assert.is(delay(), 1000);
});

test('the driver can fail a link (a wrong echo): the reason is shown and it is retried', async () => {
  const b = await tcpBoard();
  const clock = new FakeClock();
  const { sup, delay } = supervise({ device: `tcp://127.0.0.1:${b.port}`, clock, session: async () => {} });
  sup.start();
  await waitUntil(() => sup.state.connected, 3000, 'tcp never online');
  sup.fail('frequency echo 868000000 differs from the configured 867200000');
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'fail() did not take the link down');
  assert.is(sup.state.lastError, 'frequency echo 868000000 differs from the configured 867200000');
  assert.is(delay(), 1000);
});

test('a session or state listener that throws is contained', async () => {
  const b = await tcpBoard();
  const clock = new FakeClock();
  const sup = new DeviceSupervisor({
    device: `tcp://127.0.0.1:${b.port}`,
    open: (d) => openLink(d, { claims: new PortClaims(), clock }),
    session: () => {
      throw new Error('driver bug in session');
    },
    onState: () => {
      throw new Error('driver bug in listener');
    },
    clock,
    log: silentLogger,
  });
  cleanups.unshift(() => sup.stop());
  sup.start();
  await waitUntil(() => sup.state.phase === 'backoff', 3000, 'a throwing session did not end in backoff');
  assert.is(sup.state.lastError, 'driver bug in session');
});

test.run();
