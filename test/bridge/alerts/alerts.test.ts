import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { smsSimNetwork } from '../../../src/bearers/sms/simulator/link.ts';
import { AlertBook } from '../../../src/bridge/alerts/book.ts';
import type { AlertStore } from '../../../src/bridge/alerts/store.ts';
import { ALERT_SCAN_MS, AlertWatch } from '../../../src/bridge/alerts/watch.ts';
import type { RouterEvent } from '../../../src/bridge/engine/events.ts';
import { EventStream } from '../../../src/lib/events.ts';
import { silentLogger } from '../../../src/lib/log.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { waitUntil } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { waitOnline } from '../../helpers/meshtastic.ts';
import { createRule, createSim, sendText } from '../../helpers/routing.ts';
import { createSmsInterface } from '../../helpers/sms.ts';

// Alerts as messages (docs/alerts.md), as an operator sets them up: a sim interface that goes
// offline for longer than its threshold produces one alert, and one "cleared" when it is back;
// a rule delivers both to the operator's phone through a simulated SMS modem; a flapping
// interface produces no more alerts than bridge.alerts.max_per_hour allows.

const PHONE = '+15550009999';

async function alertingBridge(channel: string, alerts: Record<string, unknown>): Promise<{ t: TestBridge; radio: any }> {
  const t = await startTestBridge();
  const radio = await createSim(t.call, 'radio', { device: `sim://${channel}` });
  await createSmsInterface(t, 'phone', `sim://${channel}-sms`);
  await waitOnline(t, 'phone');
  await waitOnline(t, 'radio');
  await createRule(t.call, 'alerts-to-phone', { match: { direction: 'outbound', from: ['alert'] }, action: 'forward', destinations: [{ interface: 'phone', to: PHONE }] });
  const r = await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { alerts } } });
  assert.is(r.status, 200, r.text);
  return { t, radio };
}

const setLink = async (t: TestBridge, id: string, up: boolean) => assert.is((await t.call('POST', `/api/sim/${id}/link`, { body: { up } })).status, 200);
const alertMessages = async (t: TestBridge) => ((await t.call('GET', '/api/messages?limit=100')).body.items as any[]).filter((m) => m.from === 'alert');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an interface offline past its threshold: one alert, one cleared, both texted to the operator', async () => {
  const { t, radio } = await alertingBridge('alerts-a', { interface_offline_s: 1 });
  const network = smsSimNetwork('alerts-a-sms');
  try {
    await setLink(t, radio.id, false);
    const raised = await waitUntil('the alert is texted', () => network.textsTo(PHONE).length >= 1 && network.textsTo(PHONE));
    assert.match(raised[0], /^fieldbridge: interface radio \(sim\) offline for 1 s/);
    await sleep(1500); // still offline: no second alert
    assert.is((await alertMessages(t)).length, 1);
    const [stored] = await alertMessages(t);
    assert.is(stored.meta.alert.source, 'interface_offline');
    assert.is(stored.meta.alert.state, 'raised');
    assert.is(stored.decision.rule_id !== null, true);
    await setLink(t, radio.id, true);
    const both = await waitUntil('the cleared alert is texted', () => network.textsTo(PHONE).length >= 2 && network.textsTo(PHONE));
    assert.match(both[1], /^fieldbridge: cleared: interface radio is online again/);
    assert.is((await alertMessages(t)).length, 2);
    // Off briefly (under the threshold): nothing.
    await setLink(t, radio.id, false);
    await sleep(300);
    await setLink(t, radio.id, true);
    await sleep(1200);
    assert.is((await alertMessages(t)).length, 2);
  } finally {
    await t.stop();
  }
});

test('a flapping interface produces no more alerts than max_per_hour', async () => {
  const { t, radio } = await alertingBridge('alerts-b', { interface_offline_s: 1, max_per_hour: 3 });
  try {
    for (let i = 0; i < 3; i++) {
      await setLink(t, radio.id, false);
      await sleep(1300);
      await setLink(t, radio.id, true);
      await sleep(100);
    }
    await sleep(300);
    assert.is((await alertMessages(t)).length, 3, 'raised, cleared, raised; the rest dropped');
    assert.is(t.bridge.services.alerts.book.suppressed, 3);
    assert.ok(t.logs.some((l) => l.includes('alert_suppressed')));
  } finally {
    await t.stop();
  }
});

test('dead letters raise once per interface and clear when it delivers again', async () => {
  const t = await startTestBridge();
  try {
    await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { alerts: { dead_letters: true } } } });
    // The first two sends fail and, with one attempt each, dead-letter; the third delivers.
    const lossy = await createSim(t.call, 'lossy', { device: 'sim://alerts-c', settings: { behaviour: 'fail_then_deliver', fail_count: 2 }, retry: { base_s: 1, cap_s: 1, max_attempts: 1 } });
    await waitOnline(t, 'lossy');
    await createRule(t.call, 'out', { match: { direction: 'outbound', to: ['!0000dead'] }, action: 'forward', destinations: [{ interface: 'lossy', to: '{to}' }] });
    for (const text of ['one', 'two']) await sendText(t.call, '!0000dead', text);
    await waitUntil('both dead', async () => (await t.call('GET', '/api/deliveries?state=dead')).body.items.length === 2);
    await waitUntil('one alert', async () => (await alertMessages(t)).length === 1);
    const [raised] = await alertMessages(t);
    assert.match(raised.text, /a delivery on interface lossy dead-lettered/);
    await sendText(t.call, '!0000dead', 'three');
    await waitUntil('cleared', async () => (await alertMessages(t)).length === 2);
    assert.not.ok(t.bridge.services.alerts.book.isRaised(`dead_letters:${lossy.id}`));
  } finally {
    await t.stop();
  }
});

test('a node that falls silent, and one whose battery runs low, raise once and clear (fake clock)', async () => {
  const clock = new FakeClock(Date.parse('2026-06-01T12:00:00.000Z'));
  const t = await startTestBridge({ clock });
  try {
    await t.call('POST', '/api/config/module', { body: { section: 'bridge', settings: { alerts: { node_silent_min: 30, battery_below_pct: 20 } } } });
    const mesh = await createSim(t.call, 'mesh', { device: 'sim://alerts-d' });
    const nodes = t.bridge.services.nodes;
    const heard = (id: string, battery: number) => nodes.upsert(mesh.id, { id, long_name: `Hut ${id}`, last_heard_at: new Date(clock.now()).toISOString(), device_metrics: { battery_level_pct: battery } }, new Date(clock.now()).toISOString());
    heard('!000000a1', 80);
    heard('!000000b2', 15);
    clock.advance(ALERT_SCAN_MS);
    let texts = (await alertMessages(t)).map((m) => m.text);
    assert.equal(texts, ['fieldbridge: node Hut !000000b2 (!000000b2) battery at 15% (below 20%)']);
    // 31 minutes without !000000a1 (and !000000b2): each raises once, in the scan after the line.
    clock.advance(30 * 60_000);
    texts = (await alertMessages(t)).map((m) => m.text).sort();
    assert.is(texts.filter((x) => x.includes('not heard for')).length, 2, texts.join('\n'));
    clock.advance(10 * 60_000);
    assert.is((await alertMessages(t)).length, 3, 'no repeats while silent');
    heard('!000000a1', 80);
    heard('!000000b2', 30);
    clock.advance(ALERT_SCAN_MS);
    texts = (await alertMessages(t)).map((m) => m.text);
    assert.ok(texts.includes('fieldbridge: cleared: node Hut !000000a1 (!000000a1) heard again'), texts.join('\n'));
    assert.ok(texts.includes('fieldbridge: cleared: node Hut !000000b2 (!000000b2) battery back at 30%'), texts.join('\n'));
  } finally {
    await t.stop();
  }
});

test('a dead letter and a delivery on the same interface in one tick: raised, then cleared', async () => {
  const router = new EventStream<RouterEvent>();
  const sent: string[] = [];
  const limits = { interface_offline_s: null, node_silent_min: null, battery_below_pct: null, dead_letters: true, uplink_down_min: null, disk_free_below_mb: null, max_per_hour: 12 };
  const watch = new AlertWatch({
    clock: new FakeClock(), log: silentLogger, limits: () => limits, bridgeName: () => 'fieldbridge', router,
    interfaceOf: () => ({ name: 'lora', kind: 'rnode', enabled: true }), runtime: () => ({ connected: true, last_error: null }),
    store: { load: () => [], save: () => {} } as unknown as AlertStore, uplinkState: () => 'off', freeBytes: () => null,
    send: (m) => void sent.push(m.text ?? ''),
  });
  watch.start();
  try {
    // Two proofs in one read: one send had already dead-lettered, the next delivers.
    router.emit({ type: 'delivery', delivery: { interface_id: 'ifc_1', state: 'dead' } } as unknown as RouterEvent);
    router.emit({ type: 'delivery', delivery: { interface_id: 'ifc_1', state: 'delivered' } } as unknown as RouterEvent);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(sent, ['fieldbridge: a delivery on interface lora dead-lettered (GET /api/deliveries?state=dead)', 'fieldbridge: cleared: interface lora delivers again']);
    assert.equal(watch.book.raised(), []);
  } finally {
    watch.stop();
  }
});

test('the hourly budget counts a sliding hour', () => {
  const book = new AlertBook();
  const h = 3_600_000;
  assert.ok(book.take(0, 2));
  assert.ok(book.take(10, 2));
  assert.not.ok(book.take(h - 1, 2));
  assert.ok(book.take(h, 2), 'the first has left the hour');
  assert.is(book.suppressed, 1);
  assert.ok(book.raise('k', 0));
  assert.not.ok(book.raise('k', 1));
  assert.equal(book.clear('k'), { key: 'k', at: 0 });
  assert.is(book.clear('k'), null);
});

test.run();
