// The bearer contract suite (src/bearers/bearer.ts): one set of uvu tests that every device
// driver runs through a ContractHarness, so RNode, sim and the coming Meshtastic, SMS and
// Iridium drivers are held to the same promises. Not a test file (no .test.ts): each driver's
// contract.test.ts calls bearerContract(name, harness).run().
//
// Every wait is a bounded poll of a condition (waitFor), never a bare sleep; the only fixed
// pauses are the "nothing more happens" windows (quietFor), which can only make a test pass
// more slowly, never pass by luck.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type {
  Bearer, BearerContext, BearerState, DeviceConfig, DeviceSection, FrameKind, InboundFrame, NodeReport, OutboundFrame, SendResult,
} from '../../src/bearers/bearer.ts';
import { openLink, type OpenLinkOptions } from '../../src/bearers/shared/links/open-link.ts';
import { systemClock, type Clock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/log.ts';
import { memoryState } from '../helpers/bearer-context.ts';

// ---- the harness a driver provides -------------------------------------------------------

/** A device that is not there when the bearer starts. */
export interface MissingDevice {
  device: string;
  /** Makes the device appear (e.g. starts a simulator on the closed port), when the harness
   *  can: the suite then checks the bearer picks it up without a restart. */
  appear?: () => Promise<void>;
}

/** Something on the same medium as the bearer under test that can transmit to it. */
export interface Peer {
  /** Sends one frame the bearer under test should hear. */
  send(frame: OutboundFrame): Promise<SendResult>;
  /** The `from` the bearer under test must report for this peer's frames, when known. */
  expectedFrom?: string;
  close(): Promise<void>;
}

/** What contractContext needs to build a BearerContext like the bridge's. */
export interface ContextOptions {
  /** The interface's kind-specific settings, valid for the driver. */
  settings: Record<string, unknown>;
  /** Clock handed to the bearer (default: the system clock). */
  clock?: Clock;
  /** The driver's link helpers for ctx.openLink (its DriverModule's probe and openSim), as
   *  the bridge passes them to open-link.ts. */
  link?: Pick<OpenLinkOptions, 'probe' | 'openSim' | 'defaultTcpPort'>;
  /** What ctx.deviceConfig.desired() returns per section (default: null, never written). */
  desiredDeviceConfig?: Partial<Record<DeviceSection, Record<string, unknown>>>;
}

export interface ContractHarness extends ContextOptions {
  /** Builds the bearer under test, as the bridge's factory would (short backoffs welcome). */
  create(ctx: BearerContext): Bearer;
  /** A device that works; a fresh one for each test. */
  workingDevice(): Promise<string>;
  /** A device that does not exist (a closed TCP port, /dev/serial/by-id/does-not-exist...). */
  missingDevice(): Promise<MissingDevice>;
  /** True when the driver keeps retrying a missing or lost device on its own. */
  reconnects: boolean;
  /** True when missingDevice() gives an appear() (the "picked up later" test is registered). */
  missingDeviceCanAppear?: boolean;
  /** Takes `device` away (unplug, server down); resolves to a function that brings it back.
   *  Absent when the harness cannot do that; the loss test is then not registered. */
  loseDevice?(device: string): Promise<() => Promise<void>>;
  /** A peer on the same medium as `device`, started and ready to send. `ctx` is a context
   *  made by contractContext: when the peer is a bearer, build it on that context, so the
   *  suite can also see what the peer hears. */
  makePeer(device: string, ctx: BearerContext): Promise<Peer>;
  /** Set false when the peer does not report what it hears through ctx.events.receive. */
  peerHears?: boolean;
  /** Releases what the harness made for one test (simulators, servers, channels). */
  cleanup(): Promise<void>;
  /** How long reaching connected=true may take (default 10 s). */
  connectTimeoutMs?: number;
  /** Where frames go (default 'broadcast'; an SMS bearer needs a phone number). */
  destination?: string;
  /** Set false for a bearer that carries text but no bytes (TAK's chat): the size tests send
   *  text of that many bytes, and the binary frame of (6) is not sent. */
  carriesData?: boolean;
}

// ---- the context -------------------------------------------------------------------------

export interface RecordedContext {
  ctx: BearerContext;
  states: BearerState[];
  received: InboundFrame[];
  /** Nodes the bearer reported (its radio's node database). */
  nodes: NodeReport[];
  /** What the bearer reported through ctx.deviceConfig.report(). */
  deviceReports: { section: DeviceSection; values: Record<string, unknown> | null }[];
  logs: string[];
  last(): BearerState | undefined;
}

let contexts = 0;

/** The ONE place a BearerContext is built for the contract suite: when BearerContext gains a
 *  field, add it here. Records every state and receive event the bearer reports; openLink is
 *  the bridge's real one (open-link.ts) claiming for this interface, with the driver's probe
 *  and simulator; deviceConfig is the bridge's side of that channel, kept in memory. */
export function contractContext(name: string, options: ContextOptions): RecordedContext {
  const states: BearerState[] = [];
  const received: InboundFrame[] = [];
  const nodes: NodeReport[] = [];
  const deviceReports: RecordedContext['deviceReports'] = [];
  const logs: string[] = [];
  const id = ++contexts;
  const clock = options.clock ?? systemClock;
  const log = createLogger({ level: 'debug', format: 'json', write: (line) => logs.push(line) });
  const interfaceId = `ifc_contract_${name}_${id}`;
  const listeners = new Set<(section: DeviceSection, value: Record<string, unknown>) => void>();
  const deviceConfig: DeviceConfig = {
    desired: (section) => structuredClone(options.desiredDeviceConfig?.[section] ?? null),
    onChange: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    report: (section, values) => void deviceReports.push({ section, values: values && structuredClone(values) }),
  };
  return {
    ctx: {
      interfaceId,
      interfaceName: `${name}-${id}`,
      settings: structuredClone(options.settings),
      log,
      clock,
      events: {
        receive: (frame) => void received.push(frame),
        state: (state) => void states.push({ ...state }),
        nodes: (reports) => void nodes.push(...reports),
      },
      openLink: (device) => openLink(device, { clock, log, owner: interfaceId, ...options.link }),
      deviceConfig,
      state: memoryState(),
    },
    states,
    received,
    nodes,
    deviceReports,
    logs,
    last: () => states[states.length - 1],
  };
}

// ---- helpers -------------------------------------------------------------------------------

const FRAME_KINDS: readonly FrameKind[] = ['text', 'position', 'telemetry', 'data'];
/** How long "nothing more happens" is watched for. */
const QUIET_MS = 300;

export async function waitFor(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const quietFor = (ms = QUIET_MS) => new Promise((r) => setTimeout(r, ms));

/** Settles within `ms` or fails the test; the value or the thrown error is returned. */
async function within<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Calls send() and fails the test if it throws or rejects instead of returning a verdict. */
async function sendNoThrow(bearer: Bearer, frame: OutboundFrame, what: string): Promise<SendResult> {
  let result: SendResult;
  try {
    result = await within(`send (${what})`, 10_000, Promise.resolve().then(() => bearer.send(frame)));
  } catch (error) {
    assert.unreachable(`send (${what}) threw instead of returning a verdict: ${(error as Error).message}`);
    throw error;
  }
  assertSendResult(result, what);
  return result;
}

function assertSendResult(r: SendResult, what: string): void {
  assert.type(r, 'object', `send (${what}) returns an object`);
  assert.type(r.ok, 'boolean', `send (${what}) returns ok as a boolean`);
  if (!r.ok) {
    assert.type(r.error, 'string', `send (${what}): error is a string`);
    assert.ok(r.error.length > 0, `send (${what}): error is not empty`);
    assert.type(r.retryable, 'boolean', `send (${what}): retryable is a boolean`);
  }
}

let frames = 0;
/** Where the suite's frames go: the harness's destination (a phone number for SMS), else broadcast. */
let destination = 'broadcast';
export function textFrame(text: string, over: Partial<OutboundFrame> = {}): OutboundFrame {
  const n = ++frames;
  return { deliveryId: `dlv_contract_${n}`, messageId: `msg_contract_${n}`, to: destination, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text), ...over };
}

/** A binary frame of `size` bytes, including the bytes framings escape (C0, DB, 7E, 00, FF). */
export function dataFrame(size: number): OutboundFrame {
  const special = [0xc0, 0xdb, 0xdc, 0xdd, 0x7e, 0x7d, 0x00, 0xff];
  const payload = Uint8Array.from({ length: size }, (_, i) => (i % 5 === 0 ? special[(i / 5) % special.length] : (i * 31 + 7) & 0xff));
  const n = ++frames;
  return { deliveryId: `dlv_contract_${n}`, messageId: `msg_contract_${n}`, to: destination, channel: null, kind: 'data', text: null, payload };
}

const isConnected = (r: RecordedContext) => r.states.some((s) => s.connected === true);
const hasError = (s: BearerState | undefined) => !!s && s.connected === false && typeof s.lastError === 'string' && s.lastError.length > 0;

function assertPlainJsonObject(value: unknown, when: string): void {
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `stats() ${when} returns an object`);
  const proto = Object.getPrototypeOf(value);
  assert.ok(proto === Object.prototype || proto === null, `stats() ${when} returns a plain object (not a class instance, Map...)`);
  let json = '';
  try {
    json = JSON.stringify(value);
  } catch (error) {
    assert.unreachable(`JSON.stringify(stats()) ${when} threw: ${(error as Error).message}`);
  }
  assert.type(json, 'string', `JSON.stringify(stats()) ${when} gives a string`);
  assert.ok(json.startsWith('{'), `JSON.stringify(stats()) ${when} gives an object`);
}

// ---- one test's resources --------------------------------------------------------------------

interface Kit {
  /** A bearer under test on a fresh context; stopped after the test. */
  bearer(name?: string): { bearer: Bearer; rec: RecordedContext };
  /** A peer on `device`, on a fresh recorded context; closed after the test. */
  peer(device: string): Promise<{ peer: Peer; rec: RecordedContext }>;
  /** Starts and waits for connected=true. */
  connect(bearer: Bearer, rec: RecordedContext, device: string): Promise<void>;
}

// ---- the suite -------------------------------------------------------------------------------

export function bearerContract(name: string, harness: ContractHarness) {
  /** `size` bytes: binary, or ASCII text for a bearer that carries no bytes. */
  const sizedFrame = (size: number) => (harness.carriesData === false ? textFrame('x'.repeat(size)) : dataFrame(size));
  const s = suite(`bearer contract: ${name}`);
  const connectMs = harness.connectTimeoutMs ?? 10_000;
  s.before(() => void (destination = harness.destination ?? 'broadcast'));

  /** Registers a test that gets a Kit, fails on any uncaught error or unhandled rejection
   *  during it (a bearer must not crash the bridge), and always cleans up. */
  const it = (title: string, body: (kit: Kit) => Promise<void>) =>
    s(title, async () => {
      const crashes: unknown[] = [];
      const onCrash = (error: unknown) => crashes.push(error);
      process.on('uncaughtException', onCrash);
      process.on('unhandledRejection', onCrash);
      const bearers: Bearer[] = [];
      const peers: Peer[] = [];
      const kit: Kit = {
        bearer: (n = name.replace(/\W+/g, '-')) => {
          const rec = contractContext(n, harness);
          const bearer = harness.create(rec.ctx);
          bearers.push(bearer);
          return { bearer, rec };
        },
        peer: async (device) => {
          const rec = contractContext('peer', harness);
          const peer = await harness.makePeer(device, rec.ctx);
          peers.push(peer);
          return { peer, rec };
        },
        connect: async (bearer, rec, device) => {
          await within('start() on a working device', connectMs, bearer.start(device));
          await waitFor('a state event with connected=true', () => isConnected(rec), connectMs);
        },
      };
      try {
        await body(kit);
        // Lets a late callback of this test's bearers misbehave before the verdict.
        await new Promise((r) => setImmediate(r));
        if (crashes.length) {
          assert.unreachable(`uncaught error during the test: ${crashes.map((e) => (e instanceof Error ? e.stack ?? e.message : String(e))).join('\n')}`);
        }
      } finally {
        for (const b of bearers) await within('stop() in cleanup', 10_000, b.stop()).catch(() => {});
        for (const p of peers) await within('peer close in cleanup', 10_000, p.close()).catch(() => {});
        await harness.cleanup();
        process.off('uncaughtException', onCrash);
        process.off('unhandledRejection', onCrash);
      }
    });

  // (1) A missing device is a state, never an exception.
  it('(1) start on a missing device resolves, reports connected=false with a lastError, keeps going, and stop() resolves', async (kit) => {
    const missing = await harness.missingDevice();
    const { bearer, rec } = kit.bearer();
    // A bridge must come up with its radio unplugged: start resolves promptly, it does not
    // wait for a device that is not there.
    await within('start() on a missing device', 5_000, bearer.start(missing.device));
    await waitFor('a state event with connected=false and a lastError', () => rec.states.some(hasError));
    const firstError = rec.states.findIndex(hasError);
    assert.ok(rec.states.every((st) => st.connected === false), 'never reports connected=true on a missing device');
    if (harness.reconnects) {
      // Keeps trying: the state keeps moving after the first failure (next attempt, its failure).
      await waitFor('another attempt after the first failure', () => rec.states.length >= firstError + 3);
    } else {
      await quietFor();
    }
    assert.ok(hasError(rec.last()), `still down with the reason shown: ${JSON.stringify(rec.last())}`);
    const offline = await sendNoThrow(bearer, textFrame('nobody there'), 'to a missing device');
    assert.is(offline.ok, false, 'a frame cannot go out to a missing device');
    await within('stop() after a failed start', 5_000, bearer.stop());
    const seen = rec.states.length;
    await quietFor();
    assert.is(rec.states.length, seen, 'no retry (no state event) after stop()');
    assert.ok(rec.states.every((st) => st.connected === false), 'never connected');
  });

  if (harness.missingDeviceCanAppear && harness.reconnects) {
    it('(1) a missing device that appears later is picked up without a restart', async (kit) => {
      const missing = await harness.missingDevice();
      assert.type(missing.appear, 'function', 'the harness says its missing device can appear');
      const { bearer, rec } = kit.bearer();
      await within('start() on a missing device', 5_000, bearer.start(missing.device));
      await waitFor('a state event with connected=false and a lastError', () => rec.states.some(hasError));
      await missing.appear!();
      await waitFor('connected=true once the device appeared', () => isConnected(rec), connectMs);
      const up = rec.states.find((st) => st.connected)!;
      assert.is(up.lastError, null, 'a healthy link reports lastError null');
      assert.is((await sendNoThrow(bearer, textFrame('found you'), 'after the device appeared')).ok, true);
    });
  }

  // (2) Up through a state event.
  it('(2) start on a working device reaches connected=true through a state event', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await kit.connect(bearer, rec, device);
    const up = rec.states.find((st) => st.connected)!;
    assert.is(up.lastError, null, 'a healthy link reports lastError null');
    assert.is(rec.last()!.connected, true, 'the latest state is connected');
  });

  // (3) send never throws.
  it('(3) send to a bearer never started, or stopped, returns ok:false retryable and does not throw', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    const before = await sendNoThrow(bearer, textFrame('too early'), 'before start');
    assert.is(before.ok, false, 'nothing goes out before start');
    // Retryable: the interface being down is temporary; the dispatcher should keep the
    // message, not dead-letter it.
    if (!before.ok) assert.is(before.retryable, true, `before start: ${before.error}`);
    await kit.connect(bearer, rec, device);
    await bearer.stop();
    const after = await sendNoThrow(bearer, textFrame('too late'), 'after stop');
    assert.is(after.ok, false, 'nothing goes out after stop');
    if (!after.ok) assert.is(after.retryable, true, `after stop: ${after.error}`);
  });

  // Both drivers meet this today (RNode: ERR_RNODE_FRAME_TOO_LONG naming 508; sim: "exceeds
  // the sim mtu of N bytes"). A driver that does not must be fixed, not this assertion.
  it('(3) a frame larger than mtu returns ok:false, retryable:false, with an error naming the size limit', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await kit.connect(bearer, rec, device);
    const mtu = bearer.mtu;
    for (const size of [mtu + 1, mtu * 4]) {
      const r = await sendNoThrow(bearer, sizedFrame(size), `${size} bytes with mtu ${mtu}`);
      assert.is(r.ok, false, `${size} bytes (mtu ${mtu}) is refused`);
      if (!r.ok) {
        assert.is(r.retryable, false, `retrying cannot make ${size} bytes fit: ${r.error}`);
        assert.ok(r.error.includes(String(mtu)), `the error names the limit ${mtu}: ${r.error}`);
      }
    }
    // The refusal does not hurt the link: a normal frame still goes.
    assert.is((await sendNoThrow(bearer, textFrame('still fine'), 'after an oversize frame')).ok, true, 'a normal frame still goes after an oversize one');
    // Size is judged before link state: a frame that can never fit is not kept for a retry
    // just because the interface happens to be down.
    await bearer.stop();
    const stopped = await sendNoThrow(bearer, sizedFrame(mtu + 1), 'oversize after stop');
    if (!stopped.ok) assert.is(stopped.retryable, false, `oversize to a stopped bearer: ${stopped.error}`);
    else assert.unreachable('an oversize frame was sent by a stopped bearer');
  });

  it('(3) a normal frame returns ok:true when connected and reaches a peer', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await kit.connect(bearer, rec, device);
    const { rec: peerRec } = await kit.peer(device);
    const r = await sendNoThrow(bearer, textFrame('hello from the contract'), 'connected');
    assert.is(r.ok, true, `a normal frame goes out: ${JSON.stringify(r)}`);
    if (harness.peerHears !== false) {
      await waitFor('the peer hears the frame', () => peerRec.received.some((f) => f.text === 'hello from the contract'));
    }
  });

  // (4) stop() is idempotent and final.
  it('(4) stop() before start, and stop() twice, resolve; a second stop reports nothing new', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await within('stop() before start', 5_000, bearer.stop());
    await within('stop() again before start', 5_000, bearer.stop());
    assert.ok(rec.states.every((st) => !st.connected), 'stop before start reports no connection');
    await kit.connect(bearer, rec, device);
    await within('stop()', 5_000, bearer.stop());
    const seen = rec.states.length;
    await within('second stop()', 5_000, bearer.stop());
    assert.is(rec.states.length, seen, 'a second stop() reports no further state');
    assert.is(rec.last()!.connected, false);
  });

  it('(4) after stop(), no state or receive events fire, even when a peer transmits', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await kit.connect(bearer, rec, device);
    const { peer } = await kit.peer(device);
    // First prove the peer is heard, so the silence afterwards means something.
    assert.is((await peer.send(textFrame('before stop'))).ok, true, 'the peer transmits');
    await waitFor('the bearer hears the peer before stop', () => rec.received.length === 1);
    await bearer.stop();
    const states = rec.states.length;
    const received = rec.received.length;
    await peer.send(textFrame('after stop'));
    await quietFor();
    assert.is(rec.states.length, states, `no state event after stop: ${JSON.stringify(rec.states.slice(states))}`);
    assert.is(rec.received.length, received, 'no receive event after stop');
  });

  // (5) State events on the way up and on the way down.
  it('(5) state events report the way up and the stop', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    assert.is(rec.states.length, 0, 'constructing a bearer reports nothing');
    await kit.connect(bearer, rec, device);
    for (const st of rec.states) {
      assert.type(st.connected, 'boolean');
      assert.ok(st.lastError === null || typeof st.lastError === 'string', 'lastError is a string or null');
      if (st.phase !== undefined) assert.type(st.phase, 'string');
    }
    const before = rec.states.length;
    await bearer.stop();
    assert.ok(rec.states.length > before, 'stop() reports a state change');
    assert.is(rec.last()!.connected, false, 'the last state after stop is connected=false');
  });

  if (harness.loseDevice) {
    const loseDevice = harness.loseDevice.bind(harness);
    it('(5) losing the device reports connected=false with the reason; its return reports connected=true again', async (kit) => {
      const device = await harness.workingDevice();
      const { bearer, rec } = kit.bearer();
      await kit.connect(bearer, rec, device);
      const upTo = rec.states.length;
      const restore = await loseDevice(device);
      await waitFor('connected=false with a lastError after the device went away', () => rec.states.slice(upTo).some(hasError), connectMs);
      const down = await sendNoThrow(bearer, textFrame('into the void'), 'while the device is gone');
      assert.is(down.ok, false, 'nothing goes out while the device is gone');
      if (!down.ok) assert.is(down.retryable, true, `a lost device is temporary: ${down.error}`);
      if (!harness.reconnects) return;
      await restore();
      const lostAt = rec.states.length;
      await waitFor('connected=true after the device came back', () => rec.states.slice(lostAt).some((st) => st.connected), connectMs);
      assert.is(rec.last()!.lastError, null, 'healthy again: lastError null');
      assert.is((await sendNoThrow(bearer, textFrame('back again'), 'after the device came back')).ok, true);
    });
  }

  // (6) Frames from a peer.
  it('(6) a frame from a peer reaches events.receive as an InboundFrame with from, kind and payload', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await kit.connect(bearer, rec, device);
    const { peer } = await kit.peer(device);

    const text = 'grüße from the peer';
    assert.is((await peer.send(textFrame(text))).ok, true, 'the peer sends text');
    await waitFor('the text frame arrives', () => rec.received.length >= 1);
    const t = rec.received[0];
    assertInbound(t, peer);
    assert.is(t.kind, 'text');
    assert.is(t.text, text);
    assert.equal(t.payload, new TextEncoder().encode(text));

    if (harness.carriesData === false) return;
    const binary = dataFrame(40);
    assert.is((await peer.send(binary)).ok, true, 'the peer sends binary data');
    await waitFor('the binary frame arrives', () => rec.received.length >= 2);
    const d = rec.received[1];
    assertInbound(d, peer);
    assert.is(d.kind, 'data', 'bytes that are not text arrive as data');
    assert.equal(d.payload, binary.payload, 'every byte arrives unchanged');
    assert.is(rec.received.length, 2, 'each frame arrives once');
  });

  // (7) mtu and stats.
  it('(7) mtu is a positive integer; stats() is a plain JSON object before start, connected and after stop', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    assert.ok(Number.isInteger(bearer.mtu) && bearer.mtu > 0, `mtu ${bearer.mtu} is a positive integer`);
    assertPlainJsonObject(bearer.stats(), 'before start');
    await kit.connect(bearer, rec, device);
    assertPlainJsonObject(bearer.stats(), 'while connected');
    await bearer.stop();
    assertPlainJsonObject(bearer.stats(), 'after stop');
    assert.ok(Number.isInteger(bearer.mtu) && bearer.mtu > 0, 'mtu stays a positive integer');
  });

  it('(7) mtu is honest: a frame of exactly mtu bytes is accepted and arrives whole', async (kit) => {
    const device = await harness.workingDevice();
    const { bearer, rec } = kit.bearer();
    await kit.connect(bearer, rec, device);
    const { rec: peerRec } = await kit.peer(device);
    const full = sizedFrame(bearer.mtu);
    const r = await sendNoThrow(bearer, full, `exactly mtu (${bearer.mtu}) bytes`);
    assert.is(r.ok, true, `a frame of exactly mtu bytes goes out: ${JSON.stringify(r)}`);
    if (harness.peerHears !== false) {
      await waitFor('the peer hears the full frame', () => peerRec.received.length >= 1);
      assert.equal(peerRec.received[0].payload, full.payload, 'all mtu bytes arrive unchanged');
    }
  });

  return s;
}

function assertInbound(f: InboundFrame, peer: Peer): void {
  assert.type(f.from, 'string', 'from is a string');
  assert.ok(f.from.length > 0, 'from is not empty');
  if (peer.expectedFrom !== undefined) assert.is(f.from, peer.expectedFrom, 'from names the peer');
  assert.ok(FRAME_KINDS.includes(f.kind), `kind ${f.kind} is one of ${FRAME_KINDS.join(', ')}`);
  assert.ok(f.payload instanceof Uint8Array, 'payload is a Uint8Array');
  assert.ok(f.to === null || typeof f.to === 'string', 'to is a string or null');
  assert.ok(f.channel === null || Number.isInteger(f.channel), 'channel is a number or null');
  assert.ok(f.text === null || typeof f.text === 'string', 'text is a string or null');
  assert.ok(f.meta !== null && typeof f.meta === 'object' && !Array.isArray(f.meta), 'meta is an object');
  JSON.stringify(f.meta);
}
