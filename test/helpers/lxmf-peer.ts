import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import type { RNodeChannel } from '../../src/bearers/rnode/simulator/channel.ts';
import { serveRNodeTcp, type SimTransport } from '../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator, type RNodeSimOptions } from '../../src/bearers/rnode/simulator/simulator.ts';
import { realClockEnv } from './real-clock.ts';

// A real Reticulum + LXMF endpoint as a test peer: test/peers/reticulum/lxmf_peer.py, run by
// Debian's Python with RNS and LXMF imported from source folders outside the repository
// (docs/reticulum.md, "Testing against Reticulum and LXMF"). It reaches the air through
// Reticulum's own RNodeInterface on a simulated RNode of ours served over TCP. RNS connects
// to a networked RNode on port 7633 only, so each simulated RNode a peer uses gets its own
// loopback address (serveRNodeForReticulum). The peer speaks JSON lines: commands on its
// stdin, events on its stdout (test/peers/reticulum/README.md); its RNS log is on stderr.

export const PEER_SCRIPT = join(import.meta.dirname, '..', 'peers', 'reticulum', 'lxmf_peer.py');
/** RNS's TCPConnection.TARGET_PORT (RNS/Interfaces/RNodeInterface.py): not configurable. */
export const RETICULUM_RNODE_PORT = 7633;

/** The radio settings the peer gives its RNodeInterface. The default is the bridge's `us-915`
 *  preset (src/bearers/rnode/radio.ts): SF7 at 125 kHz, ~0.35 s on air for an announce, and
 *  22 dBm, which the simulator's default maximum accepts unclamped (RNS refuses to come up
 *  when the echoed TX power differs from the configured one). */
export interface LxmfPeerRadio {
  frequency_hz: number;
  bandwidth_hz: number;
  sf: number;
  cr: number;
  tx_power_dbm: number;
}
export const LXMF_PEER_RADIO: LxmfPeerRadio = { frequency_hz: 915_000_000, bandwidth_hz: 125_000, sf: 7, cr: 5, tx_power_dbm: 22 };

export interface LxmfPeerEnv {
  python: string;
  rnsSrc: string;
  lxmfSrc: string;
  rnsVersion: string;
  lxmfVersion: string;
}

export type LxmfPeerAvailability = { ok: true; env: LxmfPeerEnv } | { ok: false; reason: string };

let availability: LxmfPeerAvailability | undefined;

/**
 * Whether the peer can run here: the Reticulum and LXMF sources (env RNS_SRC and LXMF_SRC,
 * default ${XDG_CACHE_HOME:-~/.cache}/fieldbridge/peers/{reticulum,lxmf}) and a Python that
 * imports them with pyserial and cryptography (env RNS_PYTHON, default /usr/bin/python3: the
 * pyenv `python3` on PATH lacks those modules). Checked once per process.
 */
export function lxmfPeerAvailability(): LxmfPeerAvailability {
  if (availability) return availability;
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const rnsSrc = process.env.RNS_SRC || join(cache, 'fieldbridge', 'peers', 'reticulum');
  const lxmfSrc = process.env.LXMF_SRC || join(cache, 'fieldbridge', 'peers', 'lxmf');
  const python = process.env.RNS_PYTHON || '/usr/bin/python3';
  const missing = (what: string, path: string) => ({ ok: false as const, reason: `${what} not found at ${path} (see docs/reticulum.md, "Testing against Reticulum and LXMF")` });
  if (!existsSync(join(rnsSrc, 'RNS', '__init__.py'))) return (availability = missing('Reticulum source (RNS_SRC)', rnsSrc));
  if (!existsSync(join(lxmfSrc, 'LXMF', '__init__.py'))) return (availability = missing('LXMF source (LXMF_SRC)', lxmfSrc));
  if (!existsSync(python)) return (availability = missing('Python (RNS_PYTHON)', python));
  const probe = spawnSync(python, ['-c', 'import serial, cryptography, RNS, LXMF; print(RNS.__version__, LXMF.__version__)'], {
    env: peerProcessEnv({ python, rnsSrc, lxmfSrc }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || '').trim().split('\n').pop();
    return (availability = { ok: false, reason: `${python} cannot import RNS and LXMF with pyserial and cryptography (${why}); Debian needs python3-serial and python3-cryptography` });
  }
  const [rnsVersion, lxmfVersion] = probe.stdout.trim().split(/\s+/);
  return (availability = { ok: true, env: { python, rnsSrc, lxmfSrc, rnsVersion, lxmfVersion } });
}

/** `test` where the peer can run, else `test.skip` with the reason printed: a test without
 *  its peer is reported skipped, never passed. */
export function lxmfPeerTest(avail: LxmfPeerAvailability) {
  if (!avail.ok) console.log(`  skipped: ${avail.reason}`);
  return avail.ok ? test : test.skip;
}

/** The peer's environment: the sources on its path, and the real clock (realClockEnv). */
function peerProcessEnv(env: Pick<LxmfPeerEnv, 'rnsSrc' | 'lxmfSrc'> & { python: string }): NodeJS.ProcessEnv {
  return { ...realClockEnv(), PYTHONPATH: `${env.rnsSrc}:${env.lxmfSrc}`, PYTHONUNBUFFERED: '1', PYTHONNOUSERSITE: '1' };
}

// ---- serving a simulated RNode where RNS can reach it --------------------------------------

export interface ReticulumRNode {
  /** What the peer's `rnodeHost` is set to (RNS adds port 7633 itself). */
  host: string;
  transport: SimTransport;
}

/**
 * Serves `sim` on HOST:7633, the only port RNS's RNodeInterface connects to. Without `host`,
 * a random loopback address 127.x.y.z is picked (retried when taken), so that tests running
 * at the same time do not collide; Linux answers on all of 127/8.
 */
export async function serveRNodeForReticulum(sim: RNodeSimulator, options: { host?: string } = {}): Promise<ReticulumRNode> {
  if (options.host) return { host: options.host, transport: await serveRNodeTcp(sim, { host: options.host, port: RETICULUM_RNODE_PORT }) };
  for (let attempt = 1; ; attempt++) {
    const r = () => Math.floor(Math.random() * 254) + 1;
    const host = `127.${100 + Math.floor(Math.random() * 100)}.${r()}.${r()}`;
    try {
      return { host, transport: await serveRNodeTcp(sim, { host, port: RETICULUM_RNODE_PORT }) };
    } catch (e) {
      if (attempt >= 20 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    }
  }
}

// ---- the peer -----------------------------------------------------------------------------

export type LxmfDeliveryState = 'generating' | 'outbound' | 'sending' | 'sent' | 'delivered' | 'rejected' | 'cancelled' | 'failed';
export type LxmfMethod = 'opportunistic' | 'direct' | 'propagated' | 'paper' | null;

/** Every event carries `at`, Date.now() when the helper read it. */
export type LxmfPeerEvent = { at: number } & (
  | {
      event: 'ready';
      address: string;
      identity_hash: string;
      display_name: string;
      rnode: { host: string; online: boolean; bitrate: number; frequency: number; bandwidth: number; sf: number; cr: number; txpower: number };
      rns_version: string;
      lxmf_version: string;
      /** The lxmf.propagation address when the peer also runs a propagation node. */
      propagation_address: string | null;
    }
  | { event: 'announced'; address: string; ref: string | null }
  | { event: 'announce'; address: string; identity_hash: string; display_name: string | null; stamp_cost: number | null; hops: number; path_response: boolean }
  | { event: 'path'; ref: string | null; to: string; found: boolean; hops: number | null; ms: number }
  | { event: 'links_closed'; ref: string | null; count: number }
  | { event: 'propagation_node_set'; ref: string | null; to: string }
  | { event: 'synced'; ref: string | null; state: number; complete: boolean; messages: number | null; ms: number }
  | { event: 'sending'; id: string; ref: string | null; to: string; method: LxmfMethod; size: number }
  | { event: 'delivery'; id: string; to: string; state: LxmfDeliveryState; method: LxmfMethod; attempts: number }
  | {
      event: 'message';
      id: string;
      from: string;
      to: string;
      title: string;
      content: string;
      /** LXMF fields, keys as decimal strings, bytes as hex. */
      fields: Record<string, unknown>;
      signature_validated: boolean;
      unverified_reason: 'source_unknown' | 'signature_invalid' | null;
      method: LxmfMethod;
      timestamp: number;
      rssi: number | null;
      snr: number | null;
    }
  | { event: 'error'; error: string; message: string; ref?: string | null; to?: string }
  | { event: 'bye' }
  /** A stdout line that was not JSON (should not happen: the peer's logs go to stderr). */
  | { event: 'raw'; text: string }
);

export type LxmfPeerEventOf<E extends LxmfPeerEvent['event']> = Extract<LxmfPeerEvent, { event: E }>;

export interface LxmfPeerOptions {
  /** Host of the simulated RNode (port 7633 is implied), e.g. serveRNodeForReticulum().host. */
  rnodeHost: string;
  displayName: string;
  /** The peer's folder: Reticulum config and storage, LXMF storage, the identity. Kept. */
  dir: string;
  /** Identity file, loaded if present, else created; default `${dir}/identity`. The same
   *  identity gives the same LXMF address across restarts. */
  identityPath?: string;
  radio?: Partial<LxmfPeerRadio>;
  /** RNS log level (0 critical … 7 debug); default 2, warnings. The log is peer.stderr(). */
  logLevel?: number;
  /** How long the peer waits for its RNode interface to come online (it comes up in ~4 s)
   *  before it gives up with error `rnode_offline`; default 20 s. */
  onlineTimeoutMs?: number;
  /** How long to wait for the "ready" event; default onlineTimeoutMs + 15 s. */
  readyTimeoutMs?: number;
  /** Also run an LXMF propagation node asking this stamp cost (LXMF's minimum is 13). */
  propagationCost?: number;
}

export interface LxmfPeer {
  /** The LXMF delivery address (32 hex digits). */
  readonly address: string;
  readonly identityHash: string;
  readonly displayName: string;
  readonly ready: LxmfPeerEventOf<'ready'>;
  readonly child: ChildProcess;
  /** Every event so far, oldest first. */
  readonly events: LxmfPeerEvent[];
  /** The peer's stderr so far (Reticulum's log). */
  stderr(): string;
  /** Sends an announce of the delivery destination; resolves once RNS has queued it. */
  announce(): Promise<void>;
  /** Sends an opportunistic LXMF message; resolves with the message id once LXMF took it,
   *  rejects with the peer's error (e.g. `unknown_destination` before an announce was heard). */
  send(to: string, content: string, title?: string, options?: { fields?: Record<number, unknown>; method?: 'opportunistic' | 'direct' | 'propagated' }): Promise<{ id: string; method: LxmfMethod }>;
  /** Names the propagation node this peer sends PROPAGATED messages to and syncs from. */
  setPropagationNode(address: string): Promise<void>;
  /** Fetches the peer's messages from its propagation node; resolves with how it ended. */
  sync(timeoutMs?: number): Promise<LxmfPeerEventOf<'synced'>>;
  /** Asks the network for a path to `to` (RNS.Transport.request_path) and resolves with the
   *  peer's `path` event: found or not within `timeoutMs` (default 15 s). */
  requestPath(to: string, timeoutMs?: number): Promise<LxmfPeerEventOf<'path'>>;
  /** Tears down every link of the peer; resolves with how many there were. */
  teardownLinks(): Promise<number>;
  /** The first event, past or future, that matches; rejects on timeout or exit. */
  waitFor<E extends LxmfPeerEvent>(predicate: (e: LxmfPeerEvent) => e is E, timeoutMs?: number): Promise<E>;
  waitFor(predicate: (e: LxmfPeerEvent) => boolean, timeoutMs?: number): Promise<LxmfPeerEvent>;
  /** An announce heard from `address`. */
  waitForAnnounce(address: string, timeoutMs?: number): Promise<LxmfPeerEventOf<'announce'>>;
  /** A message received (optionally only from `from`). */
  waitForMessage(match?: { from?: string; content?: string }, timeoutMs?: number): Promise<LxmfPeerEventOf<'message'>>;
  /** The delivery event of message `id` reaching `state` (default delivered); rejects early
   *  if it reaches another final state instead. */
  waitForDelivery(id: string, state?: LxmfDeliveryState, timeoutMs?: number): Promise<LxmfPeerEventOf<'delivery'>>;
  /** Asks the peer to quit (it detaches the RNode: radio off, LEAVE), kills it if it does not
   *  within 5 s. Resolves with the exit code. */
  stop(): Promise<number | null>;
  readonly exited: Promise<number | null>;
}

const FINAL_STATES: readonly LxmfDeliveryState[] = ['delivered', 'rejected', 'cancelled', 'failed'];

/** Starts a peer and resolves once it is ready (RNode online, LXMF delivery destination registered). */
export async function startLxmfPeer(options: LxmfPeerOptions): Promise<LxmfPeer> {
  const avail = lxmfPeerAvailability();
  if (!avail.ok) throw new Error(`the LXMF peer cannot run: ${avail.reason}`);
  const radio = { ...LXMF_PEER_RADIO, ...options.radio };
  const onlineTimeoutMs = options.onlineTimeoutMs ?? 20_000;
  mkdirSync(options.dir, { recursive: true });
  const args = [
    PEER_SCRIPT,
    '--rnode-host', options.rnodeHost,
    '--dir', options.dir,
    '--identity', options.identityPath ?? join(options.dir, 'identity'),
    '--display-name', options.displayName,
    '--frequency', String(radio.frequency_hz),
    '--bandwidth', String(radio.bandwidth_hz),
    '--sf', String(radio.sf),
    '--cr', String(radio.cr),
    '--txpower', String(radio.tx_power_dbm),
    '--loglevel', String(options.logLevel ?? 2),
    '--online-timeout', String(onlineTimeoutMs / 1000),
    ...(options.propagationCost !== undefined ? ['--propagation-cost', String(options.propagationCost)] : []),
  ];
  const child = spawn(avail.env.python, args, { env: peerProcessEnv(avail.env), stdio: ['pipe', 'pipe', 'pipe'] });
  const events: LxmfPeerEvent[] = [];
  const listeners = new Set<(e: LxmfPeerEvent) => void>();
  let stderr = '';
  let buffer = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!text.trim()) continue;
      let event: LxmfPeerEvent;
      try {
        event = { ...JSON.parse(text), at: Date.now() };
      } catch {
        event = { event: 'raw', text, at: Date.now() };
      }
      events.push(event);
      for (const l of [...listeners]) l(event);
    }
  });
  child.stdin!.on('error', () => {}); // a peer that died: its exit is reported instead
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    // 'close', not 'exit': by then every line the peer wrote has been read.
    child.on('close', (code) => {
      exitCode = code; // null when a signal ended it
      resolve(code);
    }),
  );
  const tail = () => `\n  peer stderr (last 2000 chars): ${stderr.slice(-2000)}\n  peer events: ${JSON.stringify(events.slice(-20))}`;

  function waitFor(predicate: (e: LxmfPeerEvent) => boolean, timeoutMs = 15_000): Promise<LxmfPeerEvent> {
    const seen = events.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      const listener = (e: LxmfPeerEvent) => {
        if (!predicate(e)) return;
        done();
        resolve(e);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${options.displayName}: no matching event within ${timeoutMs} ms${tail()}`));
      }, timeoutMs);
      listeners.add(listener);
      exited.then((code) => {
        if (!listeners.has(listener)) return;
        done();
        reject(new Error(`${options.displayName}: the peer exited (${code}) while waiting${tail()}`));
      });
    });
  }

  let refs = 0;
  const command = (cmd: Record<string, unknown>) => {
    if (exitCode !== undefined || !child.stdin!.writable) throw new Error(`${options.displayName}: the peer is not running`);
    child.stdin!.write(JSON.stringify(cmd) + '\n');
  };
  /** Sends a command and resolves with the first event `done` matches for its ref, or rejects
   *  with an error event carrying that ref. */
  const request = async <E extends LxmfPeerEvent>(cmd: Record<string, unknown>, done: (e: LxmfPeerEvent, ref: string) => e is E, timeoutMs = 10_000): Promise<E> => {
    const ref = `r${++refs}`;
    command({ ...cmd, ref });
    const e = await waitFor((e) => done(e, ref) || (e.event === 'error' && e.ref === ref), timeoutMs);
    if (e.event === 'error') throw Object.assign(new Error(`${options.displayName}: ${e.error}: ${e.message}`), { code: e.error });
    return e as E;
  };

  let ready: LxmfPeerEventOf<'ready'>;
  try {
    const first = await waitFor((e) => e.event === 'ready' || e.event === 'error', options.readyTimeoutMs ?? onlineTimeoutMs + 15_000);
    if (first.event !== 'ready') throw new Error(`${options.displayName}: ${first.event === 'error' ? `${first.error}: ${first.message}` : 'not ready'}${tail()}`);
    ready = first;
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    throw e;
  }

  let stopping: Promise<number | null> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (exitCode === undefined) {
        try {
          command({ cmd: 'quit' });
          child.stdin!.end();
        } catch {
          // already gone
        }
        const kill = (signal: NodeJS.Signals, afterMs: number) =>
          setTimeout(() => exitCode === undefined && child.kill(signal), afterMs);
        const term = kill('SIGTERM', 5_000);
        const hard = kill('SIGKILL', 7_000);
        await exited;
        clearTimeout(term);
        clearTimeout(hard);
      }
      return exitCode ?? null;
    })());

  return {
    address: ready.address,
    identityHash: ready.identity_hash,
    displayName: options.displayName,
    ready,
    child,
    events,
    stderr: () => stderr,
    exited,
    stop,
    waitFor: waitFor as LxmfPeer['waitFor'],
    announce: async () => {
      await request({ cmd: 'announce' }, (e, ref): e is LxmfPeerEventOf<'announced'> => e.event === 'announced' && e.ref === ref);
    },
    send: async (to, content, title = '', opts = {}) => {
      const e = await request(
        { cmd: 'send', to, content, title, ...(opts.fields ? { fields: opts.fields } : {}), ...(opts.method ? { method: opts.method } : {}) },
        (e, ref): e is LxmfPeerEventOf<'sending'> => e.event === 'sending' && e.ref === ref,
      );
      return { id: e.id, method: e.method };
    },
    requestPath: (to, timeoutMs = 15_000) =>
      request({ cmd: 'request_path', to, timeout: timeoutMs / 1000 }, (e, ref): e is LxmfPeerEventOf<'path'> => e.event === 'path' && e.ref === ref, timeoutMs + 5_000),
    setPropagationNode: async (address) => {
      await request({ cmd: 'set_propagation_node', to: address }, (e, ref): e is LxmfPeerEventOf<'propagation_node_set'> => e.event === 'propagation_node_set' && e.ref === ref);
    },
    sync: (timeoutMs = 60_000) =>
      request({ cmd: 'sync', timeout: timeoutMs / 1000 }, (e, ref): e is LxmfPeerEventOf<'synced'> => e.event === 'synced' && e.ref === ref, timeoutMs + 5_000),
    teardownLinks: async () =>
      (await request({ cmd: 'teardown_links' }, (e, ref): e is LxmfPeerEventOf<'links_closed'> => e.event === 'links_closed' && e.ref === ref)).count,
    waitForAnnounce: (address, timeoutMs) =>
      waitFor((e): e is LxmfPeerEventOf<'announce'> => e.event === 'announce' && e.address === address, timeoutMs) as Promise<LxmfPeerEventOf<'announce'>>,
    waitForMessage: (match = {}, timeoutMs) =>
      waitFor(
        (e) => e.event === 'message' && (match.from === undefined || e.from === match.from) && (match.content === undefined || e.content === match.content),
        timeoutMs,
      ) as Promise<LxmfPeerEventOf<'message'>>,
    waitForDelivery: async (id, state = 'delivered', timeoutMs = 30_000) => {
      const e = (await waitFor((e) => e.event === 'delivery' && e.id === id && (e.state === state || FINAL_STATES.includes(e.state)), timeoutMs)) as LxmfPeerEventOf<'delivery'>;
      if (e.state !== state) throw new Error(`${options.displayName}: message ${id} ended ${e.state}, not ${state}${tail()}`);
      return e;
    },
  };
}

export interface ChannelLxmfPeer extends LxmfPeer {
  /** The peer's simulated RNode (config, counters, fault injection). */
  readonly sim: RNodeSimulator;
  readonly rnode: ReticulumRNode;
}

/**
 * A simulated RNode on `channel`, served where RNS reaches it, and a peer on it: the usual way
 * to put a peer on the air. stop() also closes the RNode's socket and takes it off the channel.
 * For a bridge in the same process, `rnodeSimChannel(name)` (src/bearers/rnode/simulator/link.ts)
 * is the channel its `sim://name` interfaces use.
 */
export async function startLxmfPeerOnChannel(
  channel: RNodeChannel,
  options: Omit<LxmfPeerOptions, 'rnodeHost'> & { rnodeHost?: string; sim?: Omit<RNodeSimOptions, 'channel'> },
): Promise<ChannelLxmfPeer> {
  const sim = new RNodeSimulator({ name: `lxmf-${options.displayName}`, ...options.sim, channel });
  let rnode: ReticulumRNode | undefined;
  try {
    rnode = await serveRNodeForReticulum(sim, { host: options.rnodeHost });
    const peer = await startLxmfPeer({ ...options, rnodeHost: rnode.host });
    const served = rnode;
    let stopping: Promise<number | null> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        const code = await peer.stop();
        await served.transport.close();
        sim.close();
        return code;
      })());
    return { ...peer, sim, rnode, stop };
  } catch (e) {
    await rnode?.transport.close();
    sim.close();
    throw e;
  }
}

/** A temporary folder for peers (one subfolder each), removed by the returned function. */
export function lxmfPeerTempDir(prefix = 'fb-lxmf-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Polls `probe` on the real clock (the Python peers run on it) until it gives a value. */
export async function untilReal<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The rule the LXMF tests forward every outbound message with, to the interface `lxmf`. */
export const TO_LXMF_RULE = { name: 'to-lxmf', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'lxmf', to: '{to}' }] };

/** The bridge's side of an LXMF test: an RNode interface `lxmf` in reticulum mode on
 *  sim://<channel> (`settings` over us-915), its endpoint's stats (`reported.reticulum`), and
 *  its LXMF address and stats once it has announced. */
export async function reticulumInterface(
  call: (method: string, path: string, options?: { body?: unknown }) => Promise<{ status: number; text: string; body: any }>,
  channel: string,
  settings: Record<string, unknown>,
): Promise<{ address: string; announced: any; reticulum(): Promise<any> }> {
  const created = await call('POST', '/api/interfaces', { body: { name: 'lxmf', kind: 'rnode', device: `sim://${channel}`, settings: { preset: 'us-915', mode: 'reticulum', ...settings } } });
  if (created.status !== 201) throw new Error(`the lxmf interface was not created: ${created.status} ${created.text}`);
  const reticulum = async () => (await call('GET', '/api/interfaces/lxmf')).body.reported.reticulum;
  const announced = await untilReal('the bridge to announce', async () => {
    const r = await reticulum();
    return r?.last_announce_at && r;
  });
  return { address: announced.lxmf_address, announced, reticulum };
}
