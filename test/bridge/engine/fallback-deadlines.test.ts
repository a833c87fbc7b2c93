import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simChannels } from '../../../src/bearers/sim/sim-bearer.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule, createSim, settle, until } from '../../helpers/routing.ts';

// An ordered fallback member's ack_within_s counts from when it became the active member,
// queued or not (issue 30): members waiting behind sends that are never acknowledged, or on an
// interface whose link is down, escalate on time and say what held them; a send escalated away
// gives its place on the air back; deadlines that passed while the bridge was stopped escalate
// at start before anything is sent again. An in-process bridge on a fake clock, sim interfaces.

const clock = new FakeClock(Date.parse('2026-06-01T10:00:00.000Z'));
const dir = mkdtempSync(join(tmpdir(), 'fb-fallback-deadlines-'));
let t: TestBridge;
let n = 0;

test.before(async () => {
  t = await startTestBridge({ clock, dir });
});
test.after(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

const story = async (messageId: string) => (await t.call('GET', `/api/deliveries/message/${messageId}`)).body as { items: any[]; fallbacks: any[] };
const stories = (ids: string[]) => Promise.all(ids.map(story));
const onAir = async (name: string) => (await t.call('GET', `/api/deliveries?state=sending&interface=${name}`)).body.items.length as number;

async function sim(name: string, settings: Record<string, unknown> = {}): Promise<any> {
  const iface = await createSim(t.call, name, { device: `sim://fd-${name}`, settings });
  await until(`${name} connected`, async () => (await t.call('GET', '/api/interfaces/health')).body.items.find((i: any) => i.name === name)?.connected);
  return iface;
}

async function link(name: string, up: boolean): Promise<void> {
  const r = await t.call('POST', `/api/sim/${name}/link`, { body: { up } });
  assert.is(r.status, 200, r.text);
}

async function routeTo(destination: Record<string, unknown>): Promise<string> {
  const to = `fd-dest-${++n}`;
  await createRule(t.call, `fd-${n}`, { match: { direction: 'outbound', to: [to] }, action: 'forward', destinations: [destination] });
  return to;
}

async function sendMany(to: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await t.call('POST', '/api/messages/send', { body: { to, text: `m${i} to ${to}` } });
    assert.is(r.status, 202, r.text);
    ids.push(r.body.message.id);
  }
  return ids;
}

test('members queued behind 8 unacknowledged sends escalate at their deadline, saying what held them; the silent interface then sends again', async () => {
  await sim('mute-a', { behaviour: 'never_ack' });
  await sim('ok-a');
  const to = await routeTo({ strategy: 'ordered', fallback: [{ interface: 'mute-a', to: 'peer', ack_within_s: 6 }, { interface: 'ok-a', to: 'peer' }] });
  const ids = await sendMany(to, 10);
  await until('8 on the air (the sim takes 8 unacknowledged sends)', async () => (await onAir('mute-a')) === 8);

  clock.advance(5_999);
  await settle();
  assert.ok((await stories(ids)).every((s) => s.items.length === 1 && s.fallbacks[0].state === 'active'), 'nothing escalates before the deadline');

  clock.advance(1);
  const done = await until('all 10 delivered via ok-a', async () => {
    const all = await stories(ids);
    return all.every((s) => s.fallbacks[0].state === 'delivered') && all;
  });
  const first = done.map((s) => s.items.find((d) => d.fallback.position === 0));
  const aired = done.filter((_, i) => first[i].attempts === 1);
  const queued = done.filter((_, i) => first[i].attempts === 0);
  assert.is(aired.length, 8);
  assert.is(queued.length, 2, 'two never went on the air, and still escalated');
  for (const s of aired) assert.is(s.fallbacks[0].outcome, 'delivered via ok-a after mute-a timed out at 6 s');
  for (const s of queued) {
    assert.is(s.fallbacks[0].outcome, 'delivered via ok-a after mute-a not started within 6 s: the interface was busy with other sends (8 on the air, 1 more waiting)');
    assert.match(s.items[0].last_error, /^escalated: mute-a not started within 6 s/);
    assert.equal(s.fallbacks[0].trace.map((e: any) => e.event), ['started', 'escalated', 'started', 'delivered']);
  }
  assert.ok(first.every((d) => d.state === 'cancelled'));

  // The 8 escalated sends still wait for their acknowledgement in the bearer, but no longer
  // hold the interface's places on the air: a new message to mute-a goes out at once.
  const direct = await routeTo({ interface: 'mute-a', to: 'peer' });
  const [next] = await sendMany(direct, 1);
  await until('the next send on mute-a on the air', async () => (await story(next)).items[0].state === 'sending');
});

test('a member held by its link being down escalates at its deadline with that reason', async () => {
  await sim('down-b');
  await sim('ok-b');
  await link('down-b', false);
  await link('ok-b', false);
  const to = await routeTo({ strategy: 'ordered', fallback: [{ interface: 'down-b', to: 'peer', ack_within_s: 2 }, { interface: 'ok-b', to: 'peer' }] });
  const [id] = await sendMany(to, 1);
  // Neither can take it: the first waits on its interface, held.
  await until('held on down-b', async () => (await story(id)).items[0]?.state === 'held');
  await link('ok-b', true);
  clock.advance(2_000);
  const s = await until('delivered via ok-b', async () => {
    const st = await story(id);
    return st.fallbacks[0].state === 'delivered' && st;
  });
  const escalated = s.fallbacks[0].trace.find((e: any) => e.event === 'escalated');
  assert.match(escalated.detail, /^not started within 2 s: the interface was offline \(ERR_SIM_OFFLINE/);
  assert.equal(s.items.map((d) => [d.fallback.position, d.state, d.attempts]), [[0, 'cancelled', 0], [1, 'delivered', 1]]);
  await link('down-b', true);
});

test('deadlines that passed while the bridge was stopped escalate at start, queued members included, before any is sent again', async () => {
  await sim('mute-c', { behaviour: 'never_ack' });
  await sim('ok-c');
  // A radio listening on mute-c's channel: what it hears went on the air.
  let heard = 0;
  const ear = { interfaceId: 'ear-c', hear: () => void heard++ };
  simChannels.join('fd-mute-c', ear);
  const to = await routeTo({ strategy: 'ordered', fallback: [{ interface: 'mute-c', to: 'peer', ack_within_s: 30 }, { interface: 'ok-c', to: 'peer' }] });
  const ids = await sendMany(to, 12);
  await until('8 on the air', async () => (await onAir('mute-c')) === 8);
  await t.stop();
  assert.is(heard, 8);
  heard = 0;
  clock.advance(31_000);
  t = await startTestBridge({ clock, dir });
  const done = await until('all 12 delivered via ok-c', async () => {
    const all = await stories(ids);
    return all.every((s) => s.fallbacks[0].state === 'delivered') && all;
  });
  await settle();
  simChannels.leave('fd-mute-c', ear);
  assert.is(heard, 0, 'nothing went on the air on mute-c after the restart');
  for (const s of done) {
    assert.equal(s.items.map((d) => [d.fallback.position, d.state]), [[0, 'cancelled'], [1, 'delivered']]);
    assert.ok(s.items[0].attempts <= 1, 'the first member went on the air at most once');
  }
});

test.run();
