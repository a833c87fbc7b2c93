import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BearerState, DeviceConfig, DeviceSection, InboundFrame, NodeReport, OutboundFrame } from '../../../src/bearers/bearer.ts';
import { MeshtasticBearer } from '../../../src/bearers/meshtastic/driver.ts';
import { meshtasticSimMesh, openMeshtasticSimLink, type MeshtasticSimLink } from '../../../src/bearers/meshtastic/simulator/link.ts';
import { FakeClock, systemClock } from '../../../src/lib/clock.ts';
import type { MeshtasticDeviceOptions } from '../../../src/bearers/meshtastic/simulator/device.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

// The Meshtastic driver against the firmware simulator over sim:// (an in-process byte
// stream): bring-up, honest acknowledgements, receiving with repeats, faults, and the
// device-configuration channel pushing the bridge's settings with one reboot. The contract
// suite (contract.test.ts) covers what every bearer must do.

// The driver's and the simulator's timers are unref'd (they never keep a bridge alive): this
// keeps the test process up while a send waits for its acknowledgement.
let keepAlive: ReturnType<typeof setInterval>;
test.before(() => void (keepAlive = setInterval(() => {}, 1000)));
test.after(() => clearInterval(keepAlive));

let meshes = 0;
interface Radio {
  bearer: MeshtasticBearer;
  states: BearerState[];
  heard: InboundFrame[];
  nodes: NodeReport[];
  reports: Array<[DeviceSection, Record<string, unknown> | null]>;
  links: MeshtasticSimLink[];
  logs: string[];
  /** Times the driver told (BearerEvents.time). */
  times: number[];
  config: { desired: Partial<Record<DeviceSection, Record<string, unknown>>>; listeners: Array<(s: DeviceSection, v: Record<string, unknown>) => void> };
}

function radio(mesh: string, settings: Record<string, unknown> = {}, desired: Radio['config']['desired'] = {}, sim: Omit<MeshtasticDeviceOptions, 'mesh'> = {}): Radio {
  const r: Radio = { states: [], heard: [], nodes: [], reports: [], links: [], logs: [], times: [], config: { desired, listeners: [] } } as unknown as Radio;
  const deviceConfig: DeviceConfig = {
    desired: (s) => r.config.desired[s] ?? null,
    onChange: (l) => {
      r.config.listeners.push(l);
      return () => void r.config.listeners.splice(r.config.listeners.indexOf(l), 1);
    },
    report: (s, v) => void r.reports.push([s, v]),
  };
  r.bearer = new MeshtasticBearer(
    bearerContext({
      interfaceId: `ifc_${mesh}`, interfaceName: mesh, settings: { handshake_timeout_s: 2, ack_timeout_s: 5, ...settings }, clock: systemClock,
      log: createLogger({ level: 'debug', format: 'json', write: (l) => r.logs.push(l) }),
      events: { receive: (f) => void r.heard.push(f), state: (s) => void r.states.push(s), nodes: (n) => void r.nodes.push(...n), time: (ms) => void r.times.push(ms) },
      deviceConfig,
    }),
    {
      openLink: async (device) => {
        const link = await openMeshtasticSimLink(device.slice('sim://'.length), sim);
        r.links.push(link);
        return link;
      },
      timing: { wakeMs: 5, backoffInitialMs: 30, backoffMaxMs: 200, rebootMs: 5000 },
    },
  );
  return r;
}

async function until(what: string, cond: () => boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const online = (r: Radio) => until('online', () => r.bearer.phase === 'online');
const device = (r: Radio) => r.links.at(-1)!.device;
const text = (to: string, t: string): OutboundFrame => ({ deliveryId: 'd', messageId: 'm', to, channel: null, kind: 'text', text: t, payload: new TextEncoder().encode(t) });
const newMesh = () => `mt-driver-${process.pid}-${++meshes}`;

test('bring-up: wake, handshake with a nonce, online; the device, its settings and its nodes are reported', async () => {
  const m = newMesh();
  const other = radio(m);
  await other.bearer.start(`sim://${m}`);
  await online(other);
  const r = radio(m);
  try {
    await r.bearer.start(`sim://${m}`);
    await online(r);
    const phases = r.states.map((s) => s.phase);
    for (const p of ['waking', 'handshake', 'online']) assert.ok(phases.includes(p), `phase ${p} was entered: ${phases.join(' ')}`);
    const stats = r.bearer.stats();
    assert.match(String(stats.firmware_version), /sim/);
    assert.is(stats.node_id, `!${device(r).num.toString(16).padStart(8, '0')}`);
    assert.is(stats.region, 'EU_868');
    assert.ok(r.reports.some(([s, v]) => s === 'radio' && v?.region === 'EU_868'), 'the radio settings were reported');
    assert.ok(r.reports.some(([s]) => s === 'owner'));
    assert.ok(r.nodes.some((n) => n.num === device(other).num), 'the other node came with the handshake');
    assert.is(device(r).counters.handshakes, 1);
  } finally {
    await r.bearer.stop();
    await other.bearer.stop();
  }
});

test('a direct message is delivered only on the destination\'s ack, naming it; the other side hears it once, even when repeated', async () => {
  const m = newMesh();
  const a = radio(m);
  const b = radio(m);
  try {
    await a.bearer.start(`sim://${m}`);
    await b.bearer.start(`sim://${m}`);
    await online(a);
    await online(b);
    const to = `!${device(b).num.toString(16).padStart(8, '0')}`;
    const result = await a.bearer.send(text(to, 'ridge camp'));
    assert.ok(result.ok, JSON.stringify(result));
    assert.is(result.ok && result.meta?.acked_by, to);
    await until('b heard it', () => b.heard.length === 1);
    const frame = b.heard[0];
    assert.equal([frame.kind, frame.text, frame.to], ['text', 'ridge camp', to]);
    assert.match(frame.dedupeKey ?? '', /^meshtastic:![0-9a-f]{8}:\d+$/);
    device(b).repeatLast();
    await until('the repeat', () => b.heard.length === 2);
    assert.is(b.heard[1].dedupeKey, frame.dedupeKey, 'a repeat carries the same key (the pipeline drops it)');
    assert.is(a.bearer.stats().acked, 1);
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

test('acknowledgement failures: a refused ack names the error (retryable or not), an unknown node runs out of retransmits, a broadcast is a heard rebroadcast', async () => {
  const m = newMesh();
  const a = radio(m);
  const b = radio(m);
  try {
    await a.bearer.start(`sim://${m}`);
    await b.bearer.start(`sim://${m}`);
    await online(a);
    await online(b);
    const to = `!${device(b).num.toString(16).padStart(8, '0')}`;
    device(a).faults.refuseAcks = 'NO_ROUTE';
    assert.equal(await a.bearer.send(text(to, 'x')), { ok: false, retryable: true, error: 'ERR_MESHTASTIC_NO_ROUTE: the mesh answered NO_ROUTE' });
    device(a).faults.refuseAcks = 'TOO_LARGE';
    assert.equal(await a.bearer.send(text(to, 'x')), { ok: false, retryable: false, error: 'ERR_MESHTASTIC_TOO_LARGE: the mesh answered TOO_LARGE' });
    device(a).faults.refuseAcks = null;
    const lost = await a.bearer.send(text('!0badbeef', 'anyone?'));
    assert.equal(lost, { ok: false, retryable: true, error: 'ERR_MESHTASTIC_MAX_RETRANSMIT: the mesh answered MAX_RETRANSMIT' });
    const bcast = await a.bearer.send(text('^all', 'all stations'));
    assert.ok(bcast.ok && bcast.meta?.ack === 'rebroadcast heard', JSON.stringify(bcast));
    assert.equal(a.bearer.stats().failed_by_reason, { ERR_MESHTASTIC_NO_ROUTE: 1, ERR_MESHTASTIC_TOO_LARGE: 1, ERR_MESHTASTIC_MAX_RETRANSMIT: 1 });
    assert.equal(await a.bearer.send(text('bob', 'x')), { ok: false, retryable: false, error: 'ERR_MESHTASTIC_ADDRESS: "bob" is not a node address (!a1b2c3d4, 0xa1b2c3d4, a node number, ^all or broadcast)' });
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

test('a remote node\'s texts, positions and NodeInfo arrive; garbage between frames is survived', async () => {
  const m = newMesh();
  const r = radio(m);
  try {
    await r.bearer.start(`sim://${m}`);
    await online(r);
    const remote = meshtasticSimMesh(m).addRemoteNode({ num: 0x0000abcd, long_name: 'Ridge', short_name: 'RDG' });
    device(r).sendGarbage();
    remote.sendText(device(r).num, 'hello bridge', { wantAck: true });
    await until('the text', () => r.heard.length === 1);
    assert.equal([r.heard[0].from, r.heard[0].text, r.heard[0].kind], ['!0000abcd', 'hello bridge', 'text']);
    await until('its ack', () => remote.acks.length === 1);
    assert.ok(r.nodes.some((n) => n.id === '!0000abcd'));
    assert.ok(r.bearer.stats().debug_lines as number > 0 || r.bearer.stats().oversize_frames as number > 0, 'the garbage was seen and skipped');
    assert.is(r.bearer.phase, 'online');
  } finally {
    await r.bearer.stop();
  }
});

test('a handshake that never completes is retried with the reason shown; a dropped link reconnects by itself', async () => {
  const m = newMesh();
  const r = radio(m, { handshake_timeout_s: 1 });
  try {
    await r.bearer.start(`sim://${m}`);
    await online(r);
    device(r).faults.neverCompleteHandshake = true;
    device(r).dropLink();
    await until('the handshake timeout', () => r.states.some((s) => /the device did not finish sending its state within 1 s/.test(s.lastError ?? '')), 6000);
    assert.is.not(r.bearer.phase, 'online');
    device(r).faults.neverCompleteHandshake = false;
    await online(r);
    meshtasticSimMesh(m).addRemoteNode({ num: 0x1234 });
    const sent = await r.bearer.send(text('^all', 'back'));
    assert.ok(sent.ok, JSON.stringify(sent));
  } finally {
    await r.bearer.stop();
  }
});

test('a link dropped in the middle of a frame: the half frame is thrown away, the interface reconnects and carries traffic', async () => {
  const m = newMesh();
  const r = radio(m);
  try {
    await r.bearer.start(`sim://${m}`);
    await online(r);
    const first = device(r);
    // A header announcing 64 bytes, then only 10 of them, then the link goes.
    first.sendGarbage(new Uint8Array([0x94, 0xc3, 0x00, 0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    first.dropLink();
    await until('offline with the reason', () => r.states.some((s) => s.phase === 'backoff' && !!s.lastError));
    await online(r);
    const remote = meshtasticSimMesh(m).addRemoteNode({ num: 0x00beef01 });
    remote.sendText(device(r).num, 'after the drop', { wantAck: false });
    await until('the text after the drop', () => r.heard.some((f) => f.text === 'after the drop'));
    assert.is(r.bearer.stats().undecodable, 0, 'the half frame was never decoded as one');
  } finally {
    await r.bearer.stop();
  }
});

test('device configuration: differing owner and radio are pushed once in one edit session, verified after the reboot, and not pushed again', async () => {
  const m = newMesh();
  const r = radio(m, {}, {
    owner: { long_name: 'Ridge gateway', short_name: 'RG' },
    radio: { region: 'EU_868', modem_preset: 'MEDIUM_FAST', channel_num: 1, hop_limit: 3, tx_power: 22 },
  });
  try {
    await r.bearer.start(`sim://${m}`);
    await online(r);
    const d = device(r);
    assert.equal([d.owner.long_name, d.owner.short_name], ['Ridge gateway', 'RG'], 'the device took the owner');
    assert.is(d.lora.modem_preset, 4, 'MEDIUM_FAST');
    assert.is(d.lora.region, 3, 'EU_868 kept: the whole config was sent');
    assert.is(d.counters.reboots, 1, 'one reboot');
    assert.is(r.bearer.stats().config_pushes, 1);
    assert.is(r.bearer.stats().config_error, null);
    // A reconnect with equal settings pushes nothing.
    d.dropLink();
    await until('back online', () => r.bearer.phase !== 'online');
    await online(r);
    assert.is(r.bearer.stats().config_pushes, 1, 'nothing differs: nothing pushed');
    // A change while online: pushed at once.
    r.config.desired.owner = { long_name: 'Summit', short_name: 'SU' };
    for (const l of r.config.listeners) l('owner', r.config.desired.owner);
    await until('the new owner', () => device(r).owner.long_name === 'Summit');
    await online(r);
    assert.is(r.bearer.stats().config_pushes, 2);
    assert.ok(r.reports.some(([s, v]) => s === 'owner' && v?.long_name === 'Summit'), 'the new owner was reported back after the reboot');
  } finally {
    await r.bearer.stop();
  }
});

test('a setting the device does not take is an interface error naming the field, and is not pushed again (no reboot loop)', async () => {
  const m = newMesh();
  // The simulator ignores owner names over the firmware's limits, as the firmware does.
  const r = radio(m, {}, { owner: { long_name: 'x'.repeat(45), short_name: 'RG' } });
  try {
    await r.bearer.start(`sim://${m}`);
    await online(r);
    assert.match(String(r.bearer.stats().config_error), /did not take owner.long_name/);
    assert.match(r.states.at(-1)!.lastError ?? '', /did not take owner.long_name/);
    assert.is(r.bearer.stats().config_pushes, 1, 'one push, no loop');
  } finally {
    await r.bearer.stop();
  }
});

// ---- the board's time: rx_time of a packet heard live (docs/protocols/meshtastic.md) ----
// The receiving board's clock is a FakeClock of its own; the driver's and the mesh's are not
// compared with it.

test('board time: a packet heard over the air after the handshake tells the receiving board\'s clock; a board without time tells nothing', async () => {
  const m = newMesh();
  const board = new FakeClock(Date.parse('2026-11-28T12:00:02.000Z'));
  const a = radio(m);
  const b = radio(m, {}, {}, { clock: board });
  try {
    await a.bearer.start(`sim://${m}`);
    await b.bearer.start(`sim://${m}`);
    await online(a);
    await online(b);
    assert.equal(b.times, [], 'nothing heard yet: nothing told');
    const to = `!${device(b).num.toString(16).padStart(8, '0')}`;
    assert.ok((await a.bearer.send(text(to, 'what time is it'))).ok);
    await until('b told the time', () => b.times.length === 1);
    assert.equal(b.times, [Date.parse('2026-11-28T12:00:02.000Z')]);
    assert.is((b.bearer.stats() as Record<string, any>).board_time.time, '2026-11-28T12:00:02.000Z');
    // The next packet a few seconds later is not told again (within a minute of the last).
    board.advance(5000);
    assert.ok((await a.bearer.send(text(to, 'again'))).ok);
    await until('b heard it', () => b.heard.length === 2);
    assert.is(b.times.length, 1);
    // A minute on, it is.
    board.advance(60_000);
    assert.ok((await a.bearer.send(text(to, 'later'))).ok);
    await until('b told again', () => b.times.length === 2);
    assert.is(b.times[1], Date.parse('2026-11-28T12:01:07.000Z'));
    // The board loses its time (rx_time 0): nothing more is told, the message still arrives.
    device(b).hasTime = false;
    board.advance(120_000);
    assert.ok((await a.bearer.send(text(to, 'no clock'))).ok);
    await until('b heard it', () => b.heard.length === 4);
    assert.is(b.times.length, 2);
  } finally {
    await a.bearer.stop();
    await b.bearer.stop();
  }
});

test.run();
