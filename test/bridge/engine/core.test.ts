import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Bearer, BearerContext, InboundFrame, OutboundFrame, SendResult } from '../../../src/bearers/bearer.ts';
import { defineDriver, unspecifiedSettings, type DriverModule } from '../../../src/bearers/driver-module.ts';
import { driverFor } from '../../../src/bearers/drivers.ts';
import { addressBooks, newSenderService, openBridgeDatabase } from '../../../src/bridge/app.ts';
import { deviceConfigSource } from '../../../src/bridge/config/device-config.ts';
import { ConfigService } from '../../../src/bridge/config/service.ts';
import { ConfigStore } from '../../../src/bridge/config/store.ts';
import { BookService } from '../../../src/bridge/contacts/service.ts';
import { BookStore } from '../../../src/bridge/contacts/store.ts';
import { DEFAULT_RETRY_POLICY } from '../../../src/bridge/engine/backoff.ts';
import { InterfaceService } from '../../../src/bridge/interfaces/service.ts';
import { InterfaceStore } from '../../../src/bridge/engine/interface-store.ts';
import { RoutingCore } from '../../../src/bridge/engine/core.ts';
import type { RouterEvent } from '../../../src/bridge/engine/events.ts';
import { RuleService } from '../../../src/bridge/rules/service.ts';
import { RuleStore } from '../../../src/bridge/rules/store.ts';
import { enableGroupCommit, pendingCommit } from '../../../src/db/sqlite.ts';
import { MAX_WAITING } from '../../../src/db/transaction.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';

// The routing core built directly, without HTTP (bridge/engine/core.ts): a message goes
// bearer -> host -> pipeline -> stores -> dispatcher -> bearer, and every step is seen on the
// event stream. The bearers are a scripted test driver registered as the `meshtastic` kind,
// so the test decides what each send answers and what the radio hears.

class ScriptedBearer implements Bearer {
  readonly kind = 'meshtastic';
  readonly mtu = 200;
  readonly sent: OutboundFrame[] = [];
  /** What the next sends answer, in order; then ok. */
  readonly answers: SendResult[] = [];
  concurrency = 1;
  /** While set, sends wait until release() (an acknowledgement that has not come yet). */
  holding = false;
  readonly #held: Array<() => void> = [];
  release(): void {
    this.#held.shift()?.();
  }
  readonly ctx: BearerContext;
  constructor(ctx: BearerContext) {
    this.ctx = ctx;
  }
  async start(): Promise<void> {
    this.ctx.events.state({ connected: true, lastError: null });
  }
  async stop(): Promise<void> {
    this.ctx.events.state({ connected: false, lastError: null });
  }
  async send(frame: OutboundFrame): Promise<SendResult> {
    this.sent.push(frame);
    if (this.holding) await new Promise<void>((resolve) => this.#held.push(resolve));
    return this.answers.shift() ?? { ok: true };
  }
  stats(): Record<string, unknown> {
    return { sent: this.sent.length };
  }
  /** The radio heard a frame. */
  hear(frame: Partial<InboundFrame> & { text: string }): boolean | void | PromiseLike<boolean> {
    return this.ctx.events.receive({ from: '!00000001', to: null, channel: 0, kind: 'text', payload: null, meta: {}, ...frame });
  }
  drop(): void {
    this.ctx.events.state({ connected: false, lastError: 'unplugged' });
  }
}

interface Harness {
  db: DatabaseSync;
  clock: FakeClock;
  core: RoutingCore;
  config: ConfigService;
  interfaces: InterfaceService;
  rules: RuleService;
  bearers: Map<string, ScriptedBearer>;
  events: RouterEvent[];
  dir: string;
  /** keep: leave the database for a restart. */
  close(keep?: boolean): Promise<void>;
}

function build(existingDir?: string): Harness {
  const dir = existingDir ?? mkdtempSync(join(tmpdir(), 'fb-core-'));
  const db = openBridgeDatabase(join(dir, 'bridge.db'));
  const clock = new FakeClock();
  const log = silentLogger;
  const config = new ConfigService(new ConfigStore(db), clock, log);
  const interfaceStore = new InterfaceStore(db);
  const ruleStore = new RuleStore(db);
  const refs = { rulesReferring: () => [], nameUsedElsewhere: () => false };
  const contacts = new BookService<Record<string, string>>(new BookStore(db, 'contacts', 'addresses'), { what: 'contact', refKind: 'contact', prefix: 'ctc', expand: (v) => Object.values(v as Record<string, string>) }, clock, refs);
  const groups = new BookService<string[]>(new BookStore(db, 'object_groups', 'members'), { what: 'object group', refKind: 'group', prefix: 'grp', expand: (v) => v as string[] }, clock, refs);
  const rules = new RuleService(ruleStore, { interfaces: interfaceStore, contacts, groups, clock, defaultAction: () => 'store' });
  const bearers = new Map<string, ScriptedBearer>();
  const scripted: DriverModule = defineDriver({
    kind: 'meshtastic', title: 'scripted', settings: unspecifiedSettings, contact: { field: 'mesh' }, deviceSections: ['radio'],
    create: (ctx) => {
      const b = new ScriptedBearer(ctx);
      bearers.set(ctx.interfaceId, b);
      return b;
    },
  });
  const core = new RoutingCore({
    db, clock, log, interfaceStore, rules, books: addressBooks(contacts, groups), senders: newSenderService(db, clock, contacts, groups), deviceConfig: deviceConfigSource(config), random: () => 0.5,
    // Delivery states are committed at the next turn (not grouped for GROUP_COMMIT_MS): these
    // tests watch the event stream turn by turn.
    groupCommitMs: 0,
    // sms stands for a kind configured in a release that has no driver for it yet.
    drivers: (kind) => (kind === 'meshtastic' ? scripted : kind === 'sms' ? { ...driverFor('sms')!, create: undefined } : driverFor(kind)),
  });
  const interfaces = new InterfaceService(interfaceStore, core.host, { rules, deliveries: core.deliveries, clock });
  const events: RouterEvent[] = [];
  core.events.subscribe((e) => events.push(e));
  return {
    db, clock, core, config, interfaces, rules, bearers, events,
    dir,
    close: async (keep = false) => {
      await core.stop(1000);
      db.close();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

const mesh = (h: Harness, name: string, device: string | null = `tcp://127.0.0.1:${name.length}`) =>
  h.interfaces.create({ name, kind: 'meshtastic', enabled: true, device, settings: {}, transforms: { inbound: [], outbound: [] }, retry: { ...DEFAULT_RETRY_POLICY, max_attempts: 3 } });

const forwardAllTo = (h: Harness, interfaceId: string) =>
  h.rules.create({ name: `to-${interfaceId}`, match: {}, schedule: null, action: 'forward', destinations: [{ interface: interfaceId, to: '{to}' }] });

/** Lets the dispatcher and the write-behind run (bounded). */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const deliveryStates = (h: Harness) => h.events.flatMap((e) => (e.type === 'delivery' ? [`${e.delivery.state}${e.failedAttempt ? ' (failed attempt)' : ''}`] : []));

test('a frame heard on one radio is stored, forwarded and sent on the other, every step on the event stream', async () => {
  const h = build();
  try {
    const a = await mesh(h, 'a');
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    let inTransaction: boolean | undefined;
    h.core.events.subscribe((e) => {
      if (e.type === 'message') inTransaction = h.db.isTransaction;
    });
    h.bearers.get(a.id)!.hear({ from: '!0000abcd', to: '!0000beef', text: 'ridge camp' });
    await until('the send on b', () => h.bearers.get(b.id)!.sent.length === 1);
    const frame = h.bearers.get(b.id)!.sent[0];
    assert.is(frame.text, 'ridge camp');
    assert.is(frame.to, '!0000beef', '{to} keeps the message\'s own destination');
    await until('the delivered event', () => deliveryStates(h).includes('delivered'));
    assert.is(inTransaction, true, 'the message event is told inside the transaction that stores it');
    const types = h.events.map((e) => e.type);
    assert.equal(types.filter((t) => t !== 'link'), ['message', 'queued', 'delivery']);
    const message = h.events.find((e) => e.type === 'message')!;
    assert.ok(message.type === 'message' && message.message.direction === 'inbound' && message.message.interface_id === a.id);
    assert.is(message.type === 'message' && message.deliveries.length, 1);
    assert.is(h.core.deliveries.get(frame.deliveryId)?.state, 'delivered');
  } finally {
    await h.close();
  }
});

test('group commit: a frame heard right after a commit is answered "stored" once it is on disk; radios that ignore the answer do not hurry the commit', async () => {
  const h = build();
  const other = new DatabaseSync(join(h.dir, 'bridge.db'), { timeout: 0 });
  const onDisk = (text: string) => other.prepare('SELECT 1 FROM messages WHERE text = ?').get(text) !== undefined;
  try {
    const a = await mesh(h, 'a');
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    await new Promise((r) => setTimeout(r, 300));
    enableGroupCommit(h.db, 200);
    const radio = h.bearers.get(a.id)!;
    assert.is(radio.hear({ text: 'alone' }), true, 'a lone frame is committed and answered at once');
    assert.ok(onDisk('alone'));
    // Frames whose answer nobody reads (a Meshtastic radio's): more than MAX_WAITING of them
    // leave the group to its window.
    for (let i = 0; i < MAX_WAITING + 2; i++) radio.hear({ text: `ignored ${i}` });
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(pendingCommit(h.db), 'unread answers do not make the group commit early');
    // A driver that acts on the answer (an SMS deleted from the SIM) awaits it: true once on disk.
    const answer = radio.hear({ text: 'awaited' });
    assert.is(typeof answer, 'object');
    assert.not.ok(onDisk('awaited'));
    assert.is(await answer, true);
    assert.ok(onDisk('awaited') && onDisk('ignored 0'));
    // Sent from the open group, before its commit.
    await until('every send on b', () => h.bearers.get(b.id)!.sent.length === MAX_WAITING + 4);
  } finally {
    other.close();
    await h.close();
  }
});

test('a destination "{from}" answers whoever wrote, on the interface the rule names; a message sent through the API has no sender to answer', async () => {
  const h = build();
  try {
    const a = await mesh(h, 'a');
    h.rules.create({ name: 'echo', match: { direction: 'inbound' }, schedule: null, action: 'forward', destinations: [{ interface: a.id, to: '{from}' }] });
    h.rules.create({ name: 'api', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: a.id, to: '{from}' }] });
    h.core.start();
    h.bearers.get(a.id)!.hear({ from: '!0000abcd', to: '!0000beef', text: 'anyone there?' });
    await until('the answer on a', () => h.bearers.get(a.id)!.sent.length === 1);
    assert.is(h.bearers.get(a.id)!.sent[0].to, '!0000abcd', 'sent back to the sender, not to the message\'s destination');
    const echo = h.events.find((e) => e.type === 'message')!;
    assert.ok(echo.type === 'message' && !/removed/.test(echo.message.decision!.reason), 'an answer to the sender is not a loop back to the source interface');
    const [sent] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'x', payload: null });
    assert.is(sent.deliveries.length, 0, 'nothing to answer');
    assert.match(sent.message.decision!.reason, /\{from\}: the message was sent through the API \(from local\), so it has no sender to answer/);
  } finally {
    await h.close();
  }
});

test('what the bearer said of a delivered send is kept as the delivery\'s result', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    h.bearers.get(b.id)!.answers.push({ ok: true, meta: { ack: 'acknowledged', acked_by: '!0000beef' } });
    const [result] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'x', payload: null });
    await until('delivered', () => deliveryStates(h).includes('delivered'));
    const delivered = h.events.find((e) => e.type === 'delivery')!;
    assert.equal(delivered.type === 'delivery' && delivered.delivery.result, { ack: 'acknowledged', acked_by: '!0000beef' }, 'the event carries it');
    assert.equal(h.core.deliveries.get(result.deliveries[0].id)?.result, { ack: 'acknowledged', acked_by: '!0000beef' }, 'and the row');
  } finally {
    await h.close();
  }
});

test('failed attempts are marked as such, retried on the clock, then dead-lettered', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    const bearer = h.bearers.get(b.id)!;
    bearer.answers.push({ ok: false, error: 'no ack', retryable: true }, { ok: false, error: 'no ack', retryable: true }, { ok: false, error: 'no ack', retryable: true });
    const [result] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'x', payload: null });
    await until('first attempt', () => bearer.sent.length === 1);
    await until('its retrying event', () => deliveryStates(h).length === 1);
    for (let i = 0; i < 2; i++) {
      h.clock.advance(DEFAULT_RETRY_POLICY.cap_s * 1000);
      await until(`attempt ${i + 2}`, () => bearer.sent.length === i + 2);
      await until(`its event`, () => deliveryStates(h).length === i + 2);
    }
    assert.equal(deliveryStates(h), ['retrying (failed attempt)', 'retrying (failed attempt)', 'dead (failed attempt)']);
    const dead = h.core.deliveries.get(result.deliveries[0].id)!;
    assert.is(dead.state, 'dead');
    assert.is(dead.attempts, 3);
    assert.match(dead.last_error ?? '', /no ack \(gave up after 3 attempts\)/);
  } finally {
    await h.close();
  }
});

test('a send the bearer did not make (a spent budget) waits until the time it names, without spending an attempt', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    const bearer = h.bearers.get(b.id)!;
    bearer.answers.push({ ok: false, retryable: true, notSent: true, error: 'daily budget spent', retryAtMs: h.clock.now() + 3_600_000 });
    const [result] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'tomorrow', payload: null });
    const id = result.deliveries[0].id;
    await until('the refusal', () => deliveryStates(h).length === 1);
    assert.equal(deliveryStates(h), ['retrying'], 'not a failed attempt');
    const waiting = h.core.deliveries.get(id)!;
    assert.equal([waiting.attempts, waiting.last_error], [0, 'daily budget spent']);
    h.clock.advance(3_599_000);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.is(bearer.sent.length, 1, 'not before the time named');
    h.clock.advance(1_000);
    await until('sent again', () => bearer.sent.length === 2);
    await until('delivered', () => h.core.deliveries.get(id)?.state === 'delivered');
    assert.is(h.core.deliveries.get(id)!.attempts, 1);
  } finally {
    await h.close();
  }
});

test('a failed attempt that names its earliest retry (a modem pacing its sessions) is not retried sooner', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    const bearer = h.bearers.get(b.id)!;
    bearer.answers.push({ ok: false, retryable: true, error: 'MO status 32', retryAtMs: h.clock.now() + 180_000 });
    const [result] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'sky', payload: null });
    const id = result.deliveries[0].id;
    await until('the failure', () => deliveryStates(h).length === 1);
    assert.equal(deliveryStates(h), ['retrying (failed attempt)']);
    // The first backoff is at most base_s (5 s); the bearer named 180 s.
    h.clock.advance(179_000);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.is(bearer.sent.length, 1, 'the backoff alone would have retried by now');
    h.clock.advance(1_000);
    await until('delivered', () => h.core.deliveries.get(id)?.state === 'delivered');
    assert.is(h.core.deliveries.get(id)!.attempts, 2);
  } finally {
    await h.close();
  }
});

test('a kind without a driver in this release binds, and says so in its state instead of pretending', async () => {
  const h = build();
  try {
    const row = await h.interfaces.create({ name: 'later', kind: 'sms', enabled: true, device: '/dev/serial/by-id/usb-modem', settings: {}, transforms: { inbound: [], outbound: [] }, retry: DEFAULT_RETRY_POLICY });
    const rt = h.core.host.runtime(row.id);
    assert.is(rt.connected, false);
    assert.match(rt.last_error ?? '', /no driver for interface kind 'sms' in this release/);
  } finally {
    await h.close();
  }
});

test('while the link is down deliveries wait without spending attempts; the link coming up sends them', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    const bearer = h.bearers.get(b.id)!;
    bearer.drop();
    const [result] = h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'wait', payload: null });
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.is(bearer.sent.length, 0, 'nothing is sent on a link that is down');
    assert.is(h.core.deliveries.get(result.deliveries[0].id)?.attempts, 0);
    bearer.ctx.events.state({ connected: true, lastError: null });
    await until('the send after the link came up', () => bearer.sent.length === 1);
    assert.ok(h.events.some((e) => e.type === 'link' && e.interfaceId === b.id && e.connected));
  } finally {
    await h.close();
  }
});

test('out of budget is read from the state\'s reason, not from the words of its last error; a failed send may name it too', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    h.core.start();
    const bearer = h.bearers.get(b.id)!;
    bearer.ctx.events.state({ connected: true, lastError: 'ERR_X_BUDGET: the day is spent', reason: 'budget' });
    assert.is(h.interfaces.waitingFor(b.id), "interface 'b' is out of budget: ERR_X_BUDGET: the day is spent");
    bearer.ctx.events.state({ connected: true, lastError: 'a message about ERR_X_BUDGET, with no reason' });
    assert.is(h.interfaces.waitingFor(b.id), null);
    bearer.answers.push({ ok: false, retryable: false, error: 'ERR_X_BUDGET: no budget holds this message', reason: 'budget' });
    h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: '!0000beef', channel: null, kind: 'text', text: 'too dear', payload: null });
    await until('the refused send', () => h.core.host.runtime(b.id).counters.failed === 1);
    assert.is(h.interfaces.waitingFor(b.id), "interface 'b' is out of budget: ERR_X_BUDGET: no budget holds this message");
  } finally {
    await h.close();
  }
});

test('a bearer that takes several sends at once gets them, up to its concurrency; a slot that frees takes the next', async () => {
  const h = build();
  try {
    const b = await mesh(h, 'b');
    forwardAllTo(h, b.id);
    const bearer = h.bearers.get(b.id)!;
    bearer.concurrency = 3;
    bearer.holding = true;
    h.core.start();
    for (let i = 0; i < 5; i++) h.core.pipeline.ingest({ direction: 'outbound', interfaceId: null, from: 'local', to: `!0000000${i}`, channel: null, kind: 'text', text: `m${i}`, payload: null });
    await until('three on the air', () => bearer.sent.length === 3);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.is(bearer.sent.length, 3, 'never more than three outstanding');
    bearer.release();
    await until('the fourth', () => bearer.sent.length === 4);
    bearer.holding = false;
    for (let i = 0; i < 3; i++) bearer.release();
    await until('all delivered', () => deliveryStates(h).filter((s) => s === 'delivered').length === 5);
    assert.equal(bearer.sent.map((f) => f.text).sort(), ['m0', 'm1', 'm2', 'm3', 'm4']);
  } finally {
    await h.close();
  }
});

test('device configuration: the driver reads its declared section, hears committed changes, reports back, and stops hearing when stopped', async () => {
  const h = build();
  try {
    const a = await mesh(h, 'a');
    const ctx = h.bearers.get(a.id)!.ctx;
    assert.is(ctx.deviceConfig.desired('radio'), null, 'a section never written: the device keeps its own values');
    assert.throws(() => ctx.deviceConfig.desired('owner'), /did not declare the device section 'owner'/);
    const heard: Array<[string, Record<string, unknown>]> = [];
    ctx.deviceConfig.onChange((section, value) => heard.push([section, value]));
    h.config.write('radio', { hop_limit: 5 }, 'body');
    h.config.write('owner', { long_name: 'Ridge gateway' }, 'body');
    assert.equal(heard.map(([s, v]) => [s, v.hop_limit]), [['radio', 5]], 'only the declared section, after the write');
    assert.is(ctx.deviceConfig.desired('radio')!.hop_limit, 5, 'once written, desired values are the configured ones');
    ctx.deviceConfig.report('radio', { region: 'EU_868', modem_preset: 'LONG_FAST', channel_num: 0 });
    assert.equal(h.config.reportedRadio(), { region: 'EU_868', modem_preset: 'LONG_FAST', channel_num: 0 }, 'the report reaches the configuration service (radio warnings compare with it)');
    await h.interfaces.setEnabled(a.id, false);
    h.config.write('radio', { hop_limit: 6 }, 'body');
    assert.is(heard.length, 1, 'a stopped bearer hears no more changes');
    ctx.deviceConfig.report('radio', null);
    assert.ok(h.config.reportedRadio(), 'a stopped bearer\'s report is ignored');
  } finally {
    await h.close();
  }
});

test('a frame the radio repeats (same dedupe key) is stored and forwarded once, also after a restart; the duplicates are counted', async () => {
  const first = build();
  let dir = first.dir;
  try {
    const a = await mesh(first, 'a');
    const b = await mesh(first, 'b');
    forwardAllTo(first, b.id);
    first.core.start();
    const hear = (h: Harness) => h.bearers.get(a.id)!.hear({ from: '!0000abcd', text: 'once', dedupeKey: 'meshtastic:!0000abcd:77' });
    hear(first);
    hear(first);
    await until('the forward', () => first.bearers.get(b.id)!.sent.length === 1);
    assert.is(first.core.host.runtime(a.id).counters.duplicates, 1);
    await first.close(true);
    const again = build(dir);
    dir = again.dir;
    try {
      again.core.start();
      await again.interfaces.startAll();
      hear(again);
      assert.is(again.core.host.runtime(a.id).counters.duplicates, 1, 'the key survived the restart');
      assert.is(again.events.filter((e) => e.type === 'message').length, 0, 'nothing stored');
      again.clock.advance(24 * 3_600_000 + 1);
      hear(again);
      assert.is(again.events.filter((e) => e.type === 'message').length, 1, 'after 24 hours the same key is a new frame');
    } finally {
      await again.close();
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
});

test('a frame that cannot be stored is answered false, so a driver can keep it on its device and offer it again', async () => {
  const h = build();
  try {
    const a = await mesh(h, 'a');
    h.core.start();
    h.db.exec("CREATE TRIGGER full BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'database or disk is full (simulated)'); END");
    assert.is(h.bearers.get(a.id)!.hear({ from: '!0000abcd', text: 'keep me', dedupeKey: 'sms:1' }), false);
    assert.is(h.events.filter((e) => e.type === 'message').length, 0);
    h.db.exec('DROP TRIGGER full');
    assert.is(h.bearers.get(a.id)!.hear({ from: '!0000abcd', text: 'keep me', dedupeKey: 'sms:1' }), true, 'offered again: stored');
    assert.is(h.bearers.get(a.id)!.hear({ from: '!0000abcd', text: 'keep me', dedupeKey: 'sms:1' }), true, 'a duplicate is also done with');
    assert.is(h.events.filter((e) => e.type === 'message').length, 1);
  } finally {
    await h.close();
  }
});

test('driver state: kept for the interface across a bearer restart, gone with the interface', async () => {
  const h = build();
  try {
    const a = await mesh(h, 'a');
    h.bearers.get(a.id)!.ctx.state.set('refused_pin_sha256', 'abc');
    await h.interfaces.setEnabled(a.id, false);
    await h.interfaces.setEnabled(a.id, true);
    assert.is(h.bearers.get(a.id)!.ctx.state.get('refused_pin_sha256'), 'abc', 'a new bearer sees it');
    await h.interfaces.delete(a.id);
    assert.is(h.core.driverState.get(a.id, 'refused_pin_sha256'), null);
  } finally {
    await h.close();
  }
});

test('nodes a radio reports land in the node database, merged with what was known', async () => {
  const h = build();
  try {
    const a = await mesh(h, 'a');
    const ctx = h.bearers.get(a.id)!.ctx;
    ctx.events.nodes([{ id: '!0000abcd', num: 0xabcd, long_name: 'Ridge', short_name: 'RDG', position: { latitude: 47.1, longitude: 8.5 } }]);
    ctx.events.nodes([{ id: '!0000abcd', num: 0xabcd, snr_db: 6.25, hops_away: 1 }]);
    const node = h.core.nodes.get('!0000abcd')!;
    assert.is(node.long_name, 'Ridge', 'a later report without names keeps them');
    assert.equal(node.position, { latitude: 47.1, longitude: 8.5 });
    assert.is(node.snr_db, 6.25);
    assert.is(node.hops_away, 1);
    assert.is(node.interface_id, a.id);
    await h.interfaces.setEnabled(a.id, false);
    ctx.events.nodes([{ id: '!0000ffff', num: 0xffff }]);
    assert.is(h.core.nodes.get('!0000ffff'), undefined, 'a stopped bearer reports nothing');
  } finally {
    await h.close();
  }
});

test.run();
