import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitUntil } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { launchChromium } from '../../helpers/chromium.ts';
import { createRule, createSim, sendText } from '../../helpers/routing.ts';

// GET /api/events in a real headless Chromium's EventSource (Debian's chromium with
// playwright-core), across a restart of the bridge: the browser reconnects by itself with
// Last-Event-ID and, within the log's bounds, loses no event and gets none twice. And 200
// clients at once beside one that never reads: the bridge keeps answering and cuts the slow
// one off. Page-side code reaches the page through globalThis (no DOM library in the
// project's type-check).


async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

test('a browser EventSource follows across a restart: every event once, in order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-es-'));
  const port = await freePort();
  let browser: Browser | null = null;
  let t: TestBridge | null = await startTestBridge({ dir, port });
  try {
    await createSim(t.call, 'radio', { device: 'sim://es' });
    await createRule(t.call, 'out', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'radio', to: '{to}' }] });
    browser = await launchChromium();
    const page = await browser.newPage();
    // Same origin as the stream: the page is the bridge's own health answer.
    await page.goto(`${t.url}/api/health`);
    await page.evaluate((key: string) => {
      const g = globalThis as any;
      g.seen = [];
      g.opened = 0;
      const es = new g.EventSource(`/api/events?types=message,delivery&access_token=${encodeURIComponent(key)}`);
      es.onopen = () => g.opened++;
      for (const type of ['message', 'delivery']) {
        es.addEventListener(type, (e: any) => {
          const data = JSON.parse(e.data);
          g.seen.push({ id: Number(e.lastEventId), type, text: data.message?.text ?? null, state: data.delivery?.state ?? null, message_id: data.message?.id ?? data.delivery?.message_id });
        });
      }
    }, t.ownerKey);
    const seen = async () => (await page.evaluate(() => (globalThis as any).seen)) as Array<{ id: number; type: string; text: string | null; state: string | null; message_id: string }>;
    await waitUntil('the stream opens', async () => (await page.evaluate(() => (globalThis as any).opened)) === 1);
    const first = await sendText(t.call, '!00000001', 'before the restart');
    await waitUntil('delivered', async () => (await seen()).some((e) => e.message_id === first.message.id && e.state === 'delivered'));

    await t.stop();
    t = await startTestBridge({ dir, port });
    // Sent before the browser is back (it retries every 3 s): it must come as replay.
    const second = await sendText(t.call, '!00000002', 'after the restart');
    await waitUntil('delivered on the restarted bridge', async () => (await t!.call('GET', `/api/deliveries/${second.deliveries[0].id}`)).body.state === 'delivered');
    await waitUntil('the browser catches up', async () => (await seen()).some((e) => e.message_id === second.message.id && e.state === 'delivered'), 20_000);
    assert.ok((await page.evaluate(() => (globalThis as any).opened)) >= 2, 'it reconnected');

    const events = await seen();
    const ids = events.map((e) => e.id);
    assert.equal(ids, [...ids].sort((a, b) => a - b), 'in order');
    assert.is(new Set(ids).size, ids.length, 'none twice');
    for (const m of [first, second]) {
      const mine = events.filter((e) => e.message_id === m.message.id);
      assert.is(mine.filter((e) => e.type === 'message').length, 1);
      assert.equal(mine.filter((e) => e.type === 'delivery').map((e) => e.state).at(-1), 'delivered');
    }
    // Nothing between the first and the last id is missing from what was logged for them.
    const logged = t.bridge.services.eventFeed.after(ids[0] - 1, 10_000).filter((e) => e.type === 'message' || e.type === 'delivery').map((e) => e.id);
    assert.equal(ids, logged.filter((id) => id <= ids.at(-1)!));
  } finally {
    await browser?.close();
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('200 clients at once and one that never reads: the bridge answers, the slow one is cut off', async () => {
  const t = await startTestBridge();
  t.bridge.services.config.write('bridge', { events: { max_buffered_kib: 64 } }, 'test');
  const clients: Array<{ got: string; close(): void }> = [];
  const open = (types: string, read: boolean) => {
    const c = { got: '', close: () => req.destroy() };
    const req = request(`${t.url}/api/events?types=${types}`, { headers: { Authorization: `Bearer ${t.ownerKey}` } }, (res) => {
      if (!read) return res.pause();
      res.on('data', (chunk: Buffer) => (c.got += chunk.toString()));
    });
    req.on('error', () => {});
    req.end();
    clients.push(c);
    return c;
  };
  const rssBefore = process.memoryUsage().rss;
  try {
    // The slow one follows messages (large ones follow); the 200 follow configuration changes.
    open('message', false);
    for (let i = 0; i < 200; i++) open('config', true);
    await waitUntil('201 streams', () => t.bridge.services.eventFeed.streams === 201, 30_000);
    const big = 'y'.repeat(60_000);
    for (let i = 0; i < 400 && t.bridge.services.eventFeed.streams > 200; i++) {
      await sendText(t.call, `!0000${String(i).padStart(4, '0')}`, big);
      if (i % 20 === 0) assert.is((await t.call('GET', '/api/health')).status, 200, 'the bridge keeps answering');
    }
    await waitUntil('the slow client is cut off', () => t.bridge.services.eventFeed.streams === 200, 30_000);
    assert.ok(t.logs.some((l) => l.includes('event_stream_closed') && l.includes('slow client')));
    // The 200 still follow: one change reaches each.
    t.bridge.services.config.write('bridge', { name: 'ridge-200' }, 'test');
    await waitUntil('every reader got the change', () => clients.slice(1).every((c) => c.got.includes('"section":"bridge"')), 30_000);
    // Bounded: the slow client's backlog went with it; 200 idle streams cost little each.
    const grewMiB = (process.memoryUsage().rss - rssBefore) / 1_048_576;
    assert.ok(grewMiB < 150, `RSS grew ${grewMiB.toFixed(1)} MiB`);
  } finally {
    for (const c of clients) c.close();
    await t.stop();
  }
});

test.run();
