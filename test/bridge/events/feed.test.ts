import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { EventFeed, type EventLimits } from '../../../src/bridge/events/feed.ts';
import { EventLogStore } from '../../../src/bridge/events/store.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';

// The recent events a reconnecting client is given again stay within bridge.events' three
// bounds (count, bytes, age) however many events pass, keep their order, and survive a clean
// stop. On a real bridge database; the clock is the test's.

const LIMITS: EventLimits = { log_max_events: 100, log_max_kib: 16, log_max_hours: 1, max_streams: 4, max_buffered_kib: 64, heartbeat_s: 15 };

function feedOn(limits: Partial<EventLimits> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fb-feed-'));
  const db = openBridgeDatabase(join(dir, 'bridge.db'));
  const clock = new FakeClock(Date.parse('2030-05-01T00:00:00Z'));
  const open = () => new EventFeed({ db, store: new EventLogStore(db), clock, log: createLogger({ level: 'error', format: 'json', write: () => {} }), limits: () => ({ ...LIMITS, ...limits }) });
  return { db, clock, feed: open(), reopen: open, done: () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
}

const ids = (feed: EventFeed) => feed.after(0, 1_000_000).map((e) => e.id);

test('past the count bound the oldest go first; after() answers in order across the cut', () => {
  const { feed, done } = feedOn();
  try {
    for (let i = 1; i <= 5_000; i++) feed.publish('config', { section: `s${i}` });
    assert.equal(ids(feed), Array.from({ length: 100 }, (_, i) => 4_901 + i));
    assert.is(feed.firstKept(), 4_901);
    assert.equal(feed.after(4_950, 3).map((e) => e.id), [4_951, 4_952, 4_953]);
    assert.equal(feed.after(1, 2).map((e) => e.id), [4_901, 4_902], 'an id that fell off: from the oldest kept');
    assert.equal(feed.after(5_000, 10), []);
  } finally {
    done();
  }
});

test('the byte bound: large events push out as many old ones as their size needs', () => {
  const { feed, done } = feedOn({ log_max_events: 10_000 });
  try {
    for (let i = 0; i < 50; i++) feed.publish('config', { section: 'x'.repeat(1_000) });
    const kept = feed.after(0, 1_000);
    const bytes = kept.reduce((n, e) => n + e.data.length, 0);
    assert.ok(bytes <= 16 * 1024, `${bytes} bytes kept`);
    assert.ok(bytes + kept[0].data.length > 16 * 1024, 'no more cut than needed');
    assert.is(kept.at(-1)!.id, 50);
    // Past several copies of the array (one per half of it dropped), the count still holds.
    for (let i = 0; i < 3_000; i++) feed.publish('config', { section: 'y'.repeat(i % 700) });
    const after = feed.after(0, 100_000);
    const total = after.reduce((n, e) => n + e.data.length, 0);
    assert.ok(total <= 16 * 1024 && total + after[0].data.length > 16 * 1024, `${total} bytes kept`);
    assert.equal(after.map((e) => e.id), Array.from({ length: after.length }, (_, i) => 3_050 - after.length + 1 + i), 'the newest, in order, none missing');
  } finally {
    done();
  }
});

test('the age bound: events older than log_max_hours are not given again', () => {
  const { feed, clock, done } = feedOn();
  try {
    for (let i = 0; i < 10; i++) feed.publish('config', { section: 'old' });
    clock.advance(61 * 60_000);
    feed.publish('config', { section: 'new' });
    assert.equal(ids(feed), [11]);
  } finally {
    done();
  }
});

test('a clean stop saves what is kept; the next start gives it again and numbers on above it', () => {
  const { feed, reopen, done } = feedOn();
  try {
    for (let i = 0; i < 250; i++) feed.publish('config', { section: `s${i}` });
    feed.save();
    const again = reopen();
    assert.equal(ids(again), Array.from({ length: 100 }, (_, i) => 151 + i));
    again.publish('config', { section: 'after' });
    const next = again.after(250, 10);
    assert.is(next.length, 1);
    assert.ok(next[0].id > 250 && next[0].id === again.lastId, `next id ${next[0].id}`);
  } finally {
    done();
  }
});

test.run();
