import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startBridgeProcess, waitUntil } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule, createSim, sendText } from '../../helpers/routing.ts';

// GET /api/events as an operator uses it (docs/events.md): a real `curl -N` follows a
// message's stored, queued and delivered events as they happen; a client that reconnects
// with Last-Event-ID after the bridge restarted gets what it missed, once; one older than the
// log gets a `gap` event; a client that never reads is cut off with a reason; filters hold.

interface SseEvent {
  id: number | null;
  event: string;
  data: any;
}

/** Parses the SSE wire format (WHATWG HTML, "Server-sent events") as a browser does. */
function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    let id: number | null = null;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':') || line === '') continue;
      const [field, ...rest] = line.split(':');
      const value = rest.join(':').replace(/^ /, '');
      if (field === 'id') id = Number(value);
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) events.push({ id, event, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

/** `curl -N` on the stream; `text()` is what it printed so far. */
function curlEvents(t: TestBridge, query = '', headers: string[] = []) {
  let out = '';
  const child = spawn('curl', ['-sN', '-H', `Authorization: Bearer ${t.ownerKey}`, ...headers.flatMap((h) => ['-H', h]), `${t.url}/api/events${query}`]);
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return { text: () => out, events: () => parseSse(out), stop: () => child.kill() };
}

async function routedBridge(dir?: string, fresh = true) {
  const t = await startTestBridge({ dir });
  if (fresh) {
    await createSim(t.call, 'radio', { device: 'sim://events' });
    await createRule(t.call, 'out', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'radio', to: '{to}' }] });
  }
  return t;
}

test('curl -N shows a message stored, its delivery queued and delivered, as they happen', async () => {
  const t = await routedBridge();
  const curl = curlEvents(t, '?types=message,delivery');
  try {
    await waitUntil('the stream opens', () => curl.text().startsWith('retry: 3000'));
    const sent = await sendText(t.call, '!00000001', 'hello events');
    const events = await waitUntil('delivered', () => {
      const e = curl.events();
      return e.some((x) => x.event === 'delivery' && x.data.delivery.state === 'delivered') && e;
    });
    const mine = events.filter((e) => (e.event === 'message' ? e.data.message.id : e.data.delivery.message_id) === sent.message.id);
    assert.is(mine[0].event, 'message');
    assert.is(mine[0].data.message.text, 'hello events');
    assert.equal(mine[0].data.deliveries, sent.deliveries.map((d: any) => d.id));
    const states = mine.filter((e) => e.event === 'delivery').map((e) => e.data.delivery.state);
    assert.is(states[0], 'pending');
    assert.is(states.at(-1), 'delivered');
    const ids = events.map((e) => e.id!);
    assert.equal(ids, [...ids].sort((a, b) => a - b), 'ids grow');
    assert.is(new Set(ids).size, ids.length, 'each event once');
    for (const e of events) assert.is(e.data.id, e.id);
  } finally {
    curl.stop();
    await t.stop();
  }
});

test('after a restart, Last-Event-ID replays what was missed, once; an id older than the log gets a gap', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-events-'));
  const first = await routedBridge(dir);
  let lastSeen: number;
  const curl = curlEvents(first);
  try {
    await waitUntil('the stream opens', () => curl.text().startsWith('retry: 3000'));
    await sendText(first.call, '!00000001', 'one');
    lastSeen = await waitUntil('an event', () => curl.events().at(-1)?.id ?? undefined);
  } finally {
    curl.stop();
  }
  // Sent while no client listens, then the bridge goes down and comes back.
  const missed = await sendText(first.call, '!00000002', 'two');
  await waitUntil('delivered', async () => (await first.call('GET', `/api/deliveries/${missed.deliveries[0].id}`)).body.state === 'delivered');
  await first.stop();
  const again = await routedBridge(dir, false);
  const resumed = curlEvents(again, '', [`Last-Event-ID: ${lastSeen!}`]);
  try {
    const replayed = await waitUntil("the replay", () => {
      const e = resumed.events();
      return e.some((x) => x.event === 'delivery' && x.data.delivery.message_id === missed.message.id && x.data.delivery.state === 'delivered') && e;
    });
    assert.ok(replayed.every((e) => e.id! > lastSeen!), 'nothing it had seen');
    const ids = replayed.filter((e) => e.id !== null).map((e) => e.id);
    assert.is(new Set(ids).size, ids.length, 'nothing twice');
    assert.ok(replayed.some((e) => e.event === 'message' && e.data.message.text === 'two'));
    assert.not.ok(replayed.some((e) => e.event === 'message' && e.data.message.text === 'one'));
    // The log is cut to 1 event: asking from the start is answered with a gap, never silence.
    again.bridge.services.config.write("bridge", { events: { log_max_events: 1 } }, "test");
    again.bridge.services.eventFeed.prune();
    const old = curlEvents(again, '?last_event_id=0');
    const gap = await waitUntil('a gap', () => old.events().find((e) => e.event === 'gap'));
    old.stop();
    assert.is(gap.data.from, 1);
    assert.match(gap.data.reason, /older than the bridge keeps/);
  } finally {
    resumed.stop();
    await again.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('after kill -9, a client that reconnects is told which ids were lost, and nothing is given out twice', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-events-crash-'));
  const b = await startBridgeProcess(join(dir, 'bridge.db'));
  const key = () => readFileSync(join(dir, 'owner.key'), 'utf8').trim();
  const follow = (headers: string[] = []) => {
    let out = '';
    const child = spawn('curl', ['-sN', '-H', `Authorization: Bearer ${key()}`, ...headers.flatMap((h) => ['-H', h]), `${b.process.url}/api/events`]);
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    return { events: () => parseSse(out), open: () => out.startsWith('retry:'), stop: () => child.kill() };
  };
  try {
    await b.call('POST', '/api/interfaces', { body: { name: 'radio', kind: 'sim', settings: {}, device: 'sim://crash' } });
    await b.call('POST', '/api/access-rules', { body: { name: 'out', match: { direction: 'outbound' }, schedule: null, action: 'forward', destinations: [{ interface: 'radio', to: '{to}' }] } });
    const before = follow();
    await waitUntil('the stream opens', () => before.open());
    await sendText(b.call, '!00000001', 'before the crash');
    const seen = await waitUntil('delivered', () => before.events().find((e) => e.data.delivery?.state === 'delivered'));
    before.stop();
    await b.kill();
    await b.start();
    const after = follow([`Last-Event-ID: ${seen.id}`]);
    await waitUntil('the stream opens again', () => after.open());
    await sendText(b.call, '!00000002', 'after the crash');
    const events = await waitUntil('the new message', () => after.events().some((e) => e.data.message?.text === 'after the crash') && after.events());
    after.stop();
    const gap = events.find((e) => e.event === 'gap');
    assert.ok(gap, 'a gap event');
    assert.match(gap!.data.reason, /without saving its recent events/);
    assert.ok(gap!.data.from <= seen.id! + 1);
    const ids = events.filter((e) => e.id !== null).map((e) => e.id!);
    assert.ok(ids.every((id) => id > gap!.data.to), 'new ids start above every id the crashed run may have given out');
  } finally {
    await b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('filters: interface and types', async () => {
  const t = await routedBridge();
  await createSim(t.call, 'other', { device: 'sim://events-other' });
  const radio = curlEvents(t, '?interface=radio&types=delivery');
  try {
    await waitUntil('the stream opens', () => radio.text().startsWith('retry: 3000'));
    await sendText(t.call, '!00000003', 'filtered');
    await waitUntil('delivered', () => radio.events().some((e) => e.data.delivery?.state === 'delivered'));
    assert.ok(radio.events().every((e) => e.event === 'delivery' && e.data.delivery.interface_id === e.data.delivery.interface_id));
    const bad = await t.call('GET', '/api/events?types=messages');
    assert.is(bad.status, 400);
    assert.is((await t.call('GET', '/api/events?interface=nope')).status, 404);
  } finally {
    radio.stop();
    await t.stop();
  }
});

test('a client that never reads is cut off and told why; the bridge keeps answering; streams are bounded', async () => {
  const t = await routedBridge();
  t.bridge.services.config.write('bridge', { events: { max_buffered_kib: 16, max_streams: 3 } }, 'test');
  // A raw request whose response is never read: what the bridge writes piles up in its socket.
  const stalled = request(`${t.url}/api/events`, { headers: { Authorization: `Bearer ${t.ownerKey}` } });
  let closedWith: string | null = null;
  stalled.on('response', (res) => res.pause());
  stalled.on('socket', (socket) => socket.on('close', () => (closedWith = 'closed')));
  stalled.on('error', () => (closedWith = 'error'));
  stalled.end();
  try {
    await waitUntil('the stream counts', () => t.bridge.services.eventFeed.streams === 1);
    const big = 'x'.repeat(20_000);
    for (let i = 0; i < 200 && t.bridge.services.eventFeed.streams > 0; i++) await sendText(t.call, `!0000${String(i).padStart(4, '0')}`, big);
    await waitUntil('the slow client is cut off', () => t.bridge.services.eventFeed.streams === 0, 30_000);
    assert.ok(t.logs.some((l) => l.includes('event_stream_closed') && l.includes('slow client')), 'the reason is logged');
    await waitUntil('its socket goes', () => closedWith !== null, 5_000);
    assert.is((await t.call('GET', '/api/health')).status, 200);
    // max_streams 3: a fourth is answered 503 with Retry-After.
    const open = [curlEvents(t), curlEvents(t), curlEvents(t)];
    await waitUntil('three streams', () => t.bridge.services.eventFeed.streams === 3);
    const fourth = await t.call('GET', '/api/events');
    assert.is(fourth.status, 503);
    assert.is(fourth.headers.get('retry-after'), '10');
    for (const c of open) c.stop();
    await waitUntil('slots given back', () => t.bridge.services.eventFeed.streams === 0);
  } finally {
    stalled.destroy();
    await t.stop();
  }
});

test('the bridge stopping ends every stream with a closing event', async () => {
  const t = await routedBridge();
  const curl = curlEvents(t);
  await waitUntil('the stream opens', () => curl.text().startsWith('retry: 3000'));
  await t.stop();
  const closing = await waitUntil('closing', () => curl.events().find((e) => e.event === 'closing'));
  assert.match(closing.data.reason, /stopping/);
  curl.stop();
});

test.run();
