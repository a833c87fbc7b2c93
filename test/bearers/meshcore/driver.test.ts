import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerState, InboundFrame, NodeReport, OutboundFrame, SendResult } from '../../../src/bearers/bearer.ts';
import { addressOf } from '../../../src/bearers/meshcore/inbound.ts';
import { MeshCoreBearer } from '../../../src/bearers/meshcore/driver.ts';
import { meshcoreStats } from '../../../src/bearers/meshcore/stats.ts';
import { openMeshCoreSimLink, type MeshCoreSimLink } from '../../../src/bearers/meshcore/simulator/link.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

// The MeshCore driver against the companion-radio simulator over sim:// (an in-process byte
// stream): the session start, direct messages delivered only on their ack, a lost ack and the
// path reset before the last attempt, channel messages, messages that waited while the
// bearer was stopped, refusals, and a command the radio never answers.

let keepAlive: ReturnType<typeof setInterval>;
test.before(() => void (keepAlive = setInterval(() => {}, 1000)));
test.after(() => clearInterval(keepAlive));

interface Radio {
  bearer: MeshCoreBearer;
  states: BearerState[];
  heard: InboundFrame[];
  nodes: NodeReport[];
  links: MeshCoreSimLink[];
  logs: string[];
}

function radio(name: string, settings: Record<string, unknown> = {}): Radio {
  const r = { states: [], heard: [], nodes: [], links: [], logs: [] } as unknown as Radio;
  r.bearer = new MeshCoreBearer(
    bearerContext({
      interfaceId: `ifc_${name}`, interfaceName: name, settings: { command_timeout_s: 1, ...settings }, clock: systemClock,
      log: createLogger({ level: 'debug', format: 'json', write: (l) => r.logs.push(l) }),
      events: { receive: (f) => void r.heard.push(f), state: (s) => void r.states.push(s), nodes: (n) => void r.nodes.push(...n) },
    }),
    {
      openLink: async (device) => {
        const link = await openMeshCoreSimLink(device.slice('sim://'.length), { name });
        r.links.push(link);
        return link;
      },
      timing: { backoffInitialMs: 30, backoffMaxMs: 200 },
    },
  );
  return r;
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

let meshes = 0;
async function pair(settings: Record<string, unknown> = {}) {
  const mesh = `sim://mc-driver-${process.pid}-${++meshes}`;
  const a = radio(`alpha${meshes}`, settings);
  const b = radio(`bravo${meshes}`, settings);
  await a.bearer.start(mesh);
  await b.bearer.start(mesh);
  await waitFor('both online', () => a.bearer.phase === 'online' && b.bearer.phase === 'online');
  const address = (r: Radio) => String(r.bearer.stats().address);
  return { a, b, mesh, address, stop: async () => { await a.bearer.stop(); await b.bearer.stop(); } };
}

let n = 0;
const frame = (to: string, text: string, over: Partial<OutboundFrame> = {}): OutboundFrame => ({
  deliveryId: `dlv_${++n}`, messageId: `msg_${n}`, to, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text), ...over,
});

test('the session: detecting, configuring, verifying, online; the radio\'s facts in stats; contacts in the node database', async () => {
  const { a, b, address, stop } = await pair();
  try {
    const phases = a.states.map((s) => s.phase);
    for (const p of ['opening', 'detecting', 'configuring', 'verifying', 'online']) assert.ok(phases.includes(p), `${p} in ${phases.join(',')}`);
    const stats = a.bearer.stats();
    assert.is(stats.model, 'fieldbridge simulator');
    assert.is(stats.protocol_version, 13);
    assert.is(stats.max_channels, 8);
    assert.is(stats.radio_freq_mhz, 869.525);
    assert.match(String(stats.public_key), /^[0-9a-f]{64}$/);
    assert.equal(stats.channels, [{ index: 0, name: 'Public' }]);
    assert.ok(a.nodes.some((node) => node.id === address(b) && node.network === 'meshcore'), JSON.stringify(a.nodes));
    assert.ok(a.links[0].device.appTargetVersion === 3);
    const view = meshcoreStats.read(stats, {});
    assert.ok(meshcoreStats.schema.safeParse(view).success);
    assert.is(view.address, address(a));
  } finally {
    await stop();
  }
});

test('a direct message is delivered on its ack and arrives once with sender, SNR and route', async () => {
  const { a, b, address, stop } = await pair();
  try {
    const r = await a.bearer.send(frame(address(b), 'hello bravo'));
    assert.is(r.ok, true, JSON.stringify(r));
    if (r.ok) {
      assert.match(String(r.meta?.ack), /^[0-9a-f]{8}$/);
      assert.is(r.meta?.route, 'flood');
      assert.type(r.meta?.round_trip_ms, 'number');
    }
    await waitFor('bravo hears it', () => b.heard.length === 1);
    const got = b.heard[0];
    assert.is(got.from, address(a));
    assert.is(got.text, 'hello bravo');
    assert.is(got.kind, 'text');
    assert.is(got.meta.snr_db, 6.25);
    assert.is(got.meta.route, 'flood');
    assert.ok(got.dedupeKey?.startsWith(`meshcore:${address(a)}:`));
    // The path came back with the ack: the next one goes direct.
    await waitFor('contacts refreshed', () => a.bearer.stats().awaiting_ack === 0);
    const second = await a.bearer.send(frame(address(b), 'direct now'));
    assert.is(second.ok && second.meta?.route, 'direct');
  } finally {
    await stop();
  }
});

test('a lost ack is a retryable failure; the retry keeps the timestamp (one message for the receiver) and is delivered', async () => {
  const { a, b, address, stop } = await pair({ ack_timeout_max_s: 1 });
  try {
    a.links[0].device.loseAcks(1);
    const f = frame(address(b), 'are you there');
    const first = await a.bearer.send(f);
    assert.is(first.ok, false);
    if (!first.ok) {
      assert.is(first.retryable, true);
      assert.match(first.error, /^ERR_MESHCORE_NO_ACK: no ack [0-9a-f]{8} from [0-9a-f]{12} within \d+ ms \(attempt 1, flood\)/);
    }
    const second = await a.bearer.send(f);
    assert.is(second.ok, true, JSON.stringify(second));
    assert.is(second.ok && second.meta?.attempt, 2);
    await waitFor('both copies heard', () => b.heard.length === 2);
    assert.is(b.heard[0].dedupeKey, b.heard[1].dedupeKey, 'the bridge stores it once');
  } finally {
    await stop();
  }
});

test('one text to two contacts in the same second: each delivery waits for its own ack (the radio\'s ack code does not name the recipient)', async () => {
  const { a, b, mesh, address, stop } = await pair({ ack_timeout_max_s: 1 });
  const c = radio(`charlie${meshes}`, { ack_timeout_max_s: 1 });
  try {
    await c.bearer.start(mesh);
    await waitFor('charlie online', () => c.bearer.phase === 'online');
    await waitFor('alpha knows charlie', () => a.nodes.some((x) => x.id === address(c)));
    c.links[0].device.powerOff(); // nobody can acknowledge for charlie
    const [toBravo, toCharlie] = await Promise.all([a.bearer.send(frame(address(b), 'ok')), a.bearer.send(frame(address(c), 'ok'))]);
    assert.is(toBravo.ok, true, JSON.stringify(toBravo));
    assert.is(toCharlie.ok, false, `charlie's radio is off, so charlie's delivery cannot be acknowledged: ${JSON.stringify(toCharlie)}`);
    assert.ok(!toCharlie.ok && /ERR_MESHCORE_NO_ACK/.test(toCharlie.error));
  } finally {
    await stop();
    await c.bearer.stop();
  }
});

test('after two failed attempts the path is reset to flood before the third', async () => {
  const { a, b, address, stop } = await pair({ ack_timeout_max_s: 1 });
  try {
    // A first message gives alpha a path to bravo.
    assert.is((await a.bearer.send(frame(address(b), 'path please'))).ok, true);
    await waitFor('path known', () => a.links[0].device.contact(b.links[0].device.publicKey)?.outPathLen === 0);
    a.links[0].device.loseAcks(2);
    const f = frame(address(b), 'third time lucky');
    const results: SendResult[] = [];
    for (let i = 0; i < 3; i++) results.push(await a.bearer.send(f));
    assert.equal(results.map((r) => r.ok), [false, false, true]);
    assert.is(results[2].ok && results[2].meta?.route, 'flood', 'the last attempt flooded');
    assert.is(a.bearer.stats().path_resets, 1);
  } finally {
    await stop();
  }
});

test('a channel message is delivered when the radio takes it and arrives as "<name>: text" split into sender and text', async () => {
  const { a, b, stop } = await pair();
  try {
    const r = await a.bearer.send(frame('broadcast', 'hello channel'));
    assert.equal(r, { ok: true, meta: { channel: 0, acknowledged: false } });
    await waitFor('bravo hears it', () => b.heard.length === 1);
    assert.is(b.heard[0].text, 'hello channel');
    assert.is(b.heard[0].from, a.links[0].device.name);
    assert.is(b.heard[0].channel, 0);
    assert.is(b.heard[0].to, 'broadcast');
    const none = await a.bearer.send(frame('broadcast', 'nowhere', { channel: 5 }));
    assert.equal([none.ok, !none.ok && none.retryable], [false, false]);
    assert.match(!none.ok ? none.error : '', /^ERR_MESHCORE_NO_CHANNEL/);
  } finally {
    await stop();
  }
});

test('binary data to broadcast goes as a channel datagram (DATA_TYPE_DEV) and arrives as data, byte for byte', async () => {
  const { a, b, stop } = await pair();
  try {
    const payload = Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff);
    const r = await a.bearer.send(frame('broadcast', '', { kind: 'data', text: null, payload }));
    assert.equal(r, { ok: true, meta: { channel: 0, acknowledged: false, data_type: 0xffff } });
    await waitFor('bravo hears it', () => b.heard.length === 1);
    assert.equal(b.heard[0].payload, payload);
    assert.is(b.heard[0].kind, 'data');
    assert.is(b.heard[0].from, 'channel:0');
    assert.is(b.heard[0].meta.data_type, 0xffff);
  } finally {
    await stop();
  }
});

test('messages that waited on the radio while the bearer was stopped are all received after start, each once', async () => {
  const { a, b, mesh, address, stop } = await pair();
  try {
    const bravo = address(b);
    await b.bearer.stop();
    for (const text of ['one', 'two', 'three']) assert.is((await a.bearer.send(frame(bravo, text))).ok, true, 'the radio acks while its host is away');
    assert.is(b.links[0].device.waiting, 3);
    await b.bearer.start(mesh);
    await waitFor('all three', () => b.heard.length === 3);
    assert.equal(b.heard.map((f) => f.text), ['one', 'two', 'three']);
    await new Promise((r) => setTimeout(r, 100));
    assert.is(b.heard.length, 3);
  } finally {
    await stop();
  }
});

test('refusals: too large, binary, no address are permanent; an unknown contact and an offline radio are retryable', async () => {
  const { a, stop } = await pair();
  try {
    const big = await a.bearer.send(frame('broadcast', 'x'.repeat(161)));
    assert.equal([big.ok, !big.ok && big.retryable], [false, false]);
    assert.match(!big.ok ? big.error : '', /160/);
    const prefixed = await a.bearer.send(frame('broadcast', 'x'.repeat(155)));
    assert.match(!prefixed.ok ? prefixed.error : '', /with the sender name in front/);
    const binary = await a.bearer.send(frame('0123456789ab', '', { kind: 'data', text: null, payload: Uint8Array.of(0, 1, 0xff) }));
    assert.match(!binary.ok ? binary.error : '', /^ERR_MESHCORE_NOT_TEXT/);
    const bad = await a.bearer.send(frame('@someone', 'hi'));
    assert.match(!bad.ok ? bad.error : '', /^ERR_MESHCORE_ADDRESS/);
    const unknown = await a.bearer.send(frame('0123456789ab', 'hi'));
    assert.equal([unknown.ok, !unknown.ok && unknown.retryable], [false, true]);
    await a.bearer.stop();
    const offline = await a.bearer.send(frame('broadcast', 'hi'));
    assert.equal([offline.ok, !offline.ok && offline.retryable], [false, true]);
  } finally {
    await stop();
  }
});

test('a command the radio never answers drops the link; the bearer reconnects and drains what waited', async () => {
  const { a, b, address, stop } = await pair();
  try {
    const device = b.links[0].device;
    device.faults.neverAnswer = ['SYNC_NEXT_MESSAGE'];
    assert.is((await a.bearer.send(frame(address(b), 'stuck'))).ok, true);
    await waitFor('bravo went down', () => b.states.some((s) => s.phase === 'backoff' && /SYNC_NEXT_MESSAGE/.test(s.lastError ?? '')), 5000);
    device.faults.neverAnswer = [];
    await waitFor('bravo back and drained', () => b.heard.some((f) => f.text === 'stuck'), 5000);
    assert.is(b.bearer.stats().command_timeouts, 1);
    // The waiting message may be drained while the session is still being verified.
    await waitFor('bravo online', () => b.bearer.phase === 'online', 5000);
  } finally {
    await stop();
  }
});

test('garbage on the link is skipped and counted; the session goes on', async () => {
  const { a, b, address, stop } = await pair();
  try {
    b.links[0].device.sendGarbage();
    assert.is((await a.bearer.send(frame(address(b), 'after garbage'))).ok, true);
    await waitFor('heard', () => b.heard.length === 1);
    assert.ok(Number(b.bearer.stats().skipped_bytes) > 0);
    assert.is(b.bearer.phase, 'online');
  } finally {
    await stop();
  }
});

test.run();
