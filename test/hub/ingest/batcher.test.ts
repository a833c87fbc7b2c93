import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IngestBatcher } from '../../../src/hub/ingest/batcher.ts';
import { HubIngest } from '../../../src/hub/ingest/subscriber.ts';
import { pubacks } from '../../../src/hub/ingest/subscriber.ts';
import type { BatchOp, HubStore } from '../../../src/hub/store/store.ts';
import { openHubStore, TENANT_CACHE_MS } from '../../../src/hub/store/store.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { MetricsRegistry } from '../../../src/lib/metrics.ts';
import { postgresHarness, sqliteHarness, type StoreHarness } from '../store-harness.ts';

// The ingest's batching without a broker: batches, poison events, database failures, the
// tenant cache, and the PUBACK bytes.

const topic = (id: string, tenant = 't') => `fieldbridge/v1/${tenant}/brg-1/telemetry`;
const event = (id: string) => new TextEncoder().encode(JSON.stringify({ event_id: id, ts: '2026-01-01T00:00:00Z' }));

/** A store whose ingestBatch fails as told; records the batch sizes it was called with. */
function fakeStore(fail: (ops: BatchOp[]) => Error | undefined): HubStore & { calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    dialect: 'postgres',
    ingestTenants: async (ids: Iterable<string>) => new Map([...ids].map((id) => [id, { id, created_at: '', deleted_at: null, purge_after: null }])),
    ingestBridges: async (ids: Iterable<string>) => new Map([...ids].map((id) => [id, undefined])),
    ingestBatch: async (ops: BatchOp[]) => {
      calls.push(ops.length);
      const error = fail(ops);
      if (error) throw error;
      return ops.map(() => 'stored' as const);
    },
    isRowError: (error: unknown) => (error as { code?: string }).code === '22P05',
  } as unknown as HubStore & { calls: number[] };
}

function batcher(store: HubStore, maxBatch = 100) {
  const metrics = new MetricsRegistry();
  const stored = metrics.counter('stored', '');
  const rejected: Array<{ reason: string; fields: Record<string, unknown> }> = [];
  // Unsigned events of bridge ids never enrolled are taken (HUB_ACCEPT_UNENROLLED): this file
  // is about batching; enrollment has its own tests (test/hub/bridges).
  const b = new IngestBatcher({ store, clock: systemClock, stored, reject: (reason, fields) => rejected.push({ reason, fields }), maxBatch, flushDelayMs: 1, acceptUnenrolled: true });
  const take = (ids: string[]) => Promise.all(ids.map((id) => new Promise<Error | undefined>((resolve) => b.take(topic(id), event(id), resolve))));
  return { b, take, stored, rejected };
}

const rowError = () => Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' });
const eventIds = (ops: BatchOp[]) => ops.map((o) => (o.op === 'event' ? o.event.event_id : ''));

test('a burst becomes batches of at most maxBatch, each done after its write', async () => {
  const store = fakeStore(() => undefined);
  const { take, stored } = batcher(store, 100);
  const results = await take(Array.from({ length: 250 }, (_, i) => `e${i}`));
  assert.ok(results.every((r) => r === undefined));
  assert.equal(store.calls, [100, 100, 50]);
  assert.is(stored.get({ kind: 'telemetry', result: 'stored' }), 250);
});

test('a poison event is isolated: the others are stored, it is counted once and acknowledged', async () => {
  const store = fakeStore((ops) => (eventIds(ops).includes('bad') ? rowError() : undefined));
  const { take, stored, rejected } = batcher(store);
  const ids = Array.from({ length: 40 }, (_, i) => (i === 17 ? 'bad' : `e${i}`));
  const results = await take(ids);
  assert.ok(results.every((r) => r === undefined), 'all acknowledged, the bad one too');
  assert.is(stored.get({ kind: 'telemetry', result: 'stored' }), 39);
  assert.equal(rejected.map((r) => [r.reason, r.fields.event_id]), [['store_failed', 'bad']]);
  assert.ok(store.calls.length <= 2 * Math.ceil(Math.log2(40)) + 1, `found by halving (${store.calls.length} writes)`);
});

test('a database failure acknowledges nothing and drops nothing', async () => {
  let down = true;
  const store = fakeStore(() => (down ? Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }) : undefined));
  const { take, stored, rejected } = batcher(store);
  const results = await take(['a', 'b', 'c']);
  assert.ok(results.every((r) => r?.message === 'connection refused'));
  assert.is(stored.get({ kind: 'telemetry', result: 'stored' }), 0);
  assert.equal(rejected, []);
  down = false;
  assert.ok((await take(['a', 'b', 'c'])).every((r) => r === undefined), 'the redelivery is stored');
});

test('when no row of a batch can be written, it is our fault, not a poison event: nothing dropped', async () => {
  const store = fakeStore(() => rowError());
  const { take, rejected } = batcher(store);
  const results = await take(['a', 'b', 'c', 'd']);
  assert.ok(results.every((r) => r instanceof Error));
  assert.equal(rejected, []);
});

test('whenBelow holds a caller until the queue has room (back-pressure on the MQTT parser)', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const store = fakeStore(() => undefined);
  const slow = { ...store, ingestBatch: async (ops: BatchOp[]) => (await gate, store.ingestBatch(ops)) } as unknown as HubStore;
  const { b } = batcher(slow, 10);
  const done: Array<Promise<Error | undefined>> = [];
  for (let i = 0; i < 10; i++) done.push(new Promise((resolve) => b.take(topic(`e${i}`), event(`e${i}`), resolve)));
  // The first 10 are being written; 25 more wait.
  for (let i = 10; i < 35; i++) done.push(new Promise((resolve) => b.take(topic(`e${i}`), event(`e${i}`), resolve)));
  let resumed = false;
  b.whenBelow(20, () => (resumed = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.is(resumed, false, '25 waiting: held');
  release();
  await Promise.all(done);
  assert.is(resumed, true, 'resumed once the queue went below 20');
  let now = false;
  b.whenBelow(20, () => (now = true));
  assert.is(now, true, 'at once when there is room');
});

// Issue 15 review items 1, 2 and 7.
test('a refused event\'s sequence number is recorded as done (gone); the hub\'s own acks are skipped before decoding', async () => {
  const seen: BatchOp[] = [];
  const store = fakeStore((ops) => void seen.push(...ops));
  const { b, stored, rejected } = batcher(store);
  const take = (t: string, payload: string | Uint8Array) => new Promise<Error | undefined>((resolve) => b.take(t, typeof payload === 'string' ? new TextEncoder().encode(payload) : payload, resolve));
  const results = await Promise.all([
    take('fieldbridge/v1/t/brg-1/message', `{"seq":7,"event_id":"big","ts":"2026-01-01T00:00:00Z","text":"${'x'.repeat(300 * 1024)}"}`),
    take('fieldbridge/v1/t/brg-1/message', '{"seq":8,"event_id":"cut'),
    take('fieldbridge/v1/t/brg-1/telemetry', '{"seq":9,"event_id":"","ts":"2026-01-01T00:00:00Z"}'),
    take('fieldbridge/v1/t/brg-1/message', '{"event_id":"noseq'),
    take('fieldbridge/v1/t/brg-1/status', '{"seq":10,"state":"sideways"}'),
    take('fieldbridge/v1/t/brg-1/ack', 'not even json'),
    take('fieldbridge/v1/t/brg-1/ack', '{"upto":1,"high":1,"missing":[],"ts":"2026-01-01T00:00:00Z"}'),
  ]);
  assert.ok(results.every((r) => r === undefined), 'all done (PUBACKed)');
  assert.equal(seen.map((o) => (o.op === 'gone' ? [o.bridgeId, o.ranges] : o.op)), [['brg-1', [[7, 7]]], ['brg-1', [[8, 8]]], ['brg-1', [[9, 9]]]]);
  assert.equal(rejected.map((r) => r.reason), ['too_large', 'bad_json', 'bad_payload', 'bad_json', 'bad_payload'], 'still counted as rejected; acks not at all');
  assert.is(stored.get({ kind: 'message', result: 'stored' }), 0, 'a refused event is not counted as stored');
});

test('a poison event whose number cannot be recorded either: the rest of the batch is still done', async () => {
  const withSeq = (id: string, seq: number) => new TextEncoder().encode(JSON.stringify({ seq, event_id: id, ts: '2026-01-01T00:00:00Z' }));
  const store = fakeStore((ops) => (ops.some((o) => (o.op === 'event' && o.event.event_id === 'bad') || o.op === 'gone') ? rowError() : undefined));
  const { b, stored, rejected } = batcher(store);
  const results = await Promise.all(['a', 'bad', 'c', 'd'].map((id, i) => new Promise<Error | undefined>((resolve) => b.take(topic(id), withSeq(id, i + 1), resolve))));
  assert.equal(results, [undefined, undefined, undefined, undefined]);
  assert.is(stored.get({ kind: 'telemetry', result: 'stored' }), 3);
  assert.equal(rejected.map((r) => r.reason), ['store_failed', 'seq_failed']);
});

test('PUBACK bytes: 0x40, length 2, packet id (MQTT 3.1.1 and 5 section 3.4)', () => {
  assert.equal([...pubacks([1, 0x1234])], [0x40, 2, 0, 1, 0x40, 2, 0x12, 0x34]);
});

for (const make of [sqliteHarness, postgresHarness] as Array<() => StoreHarness>) {
  test(`${make().name}: the tenant cache follows deletion and restore at once, another process's within ${TENANT_CACHE_MS} ms; duplicates and poison`, async () => {
    const harness = make();
    const location = await harness.freshLocation();
    const store = await openHubStore(location);
    const other = await openHubStore(location);
    const metrics = new MetricsRegistry();
    const ingest = new HubIngest({ store, log: createLogger({ write: () => {} }), clock: systemClock, metrics, url: 'mqtt://127.0.0.1:1', shared: false, clientId: 'x', flushDelayMs: 0, acceptUnenrolled: true });
    const rejected = (reason: string) => Number(new RegExp(`fieldbridge_hub_ingest_rejected_total\\{reason="${reason}"\\} (\\d+)`).exec(metrics.render())?.[1] ?? 0);
    try {
      const now = new Date().toISOString();
      await store.ensureTenant('c', now);
      await ingest.handle(topic('1', 'c'), event('1'));
      assert.is(await store.countEvents('c', 'telemetry'), 1);
      // Through this store: seen at once.
      await store.markTenantDeleted('c', now, now);
      await ingest.handle(topic('2', 'c'), event('2'));
      assert.is(rejected('tenant_deleted'), 1);
      await store.restoreTenant('c');
      await ingest.handle(topic('3', 'c'), event('3'));
      assert.is(await store.countEvents('c', 'telemetry'), 2);
      // Through another store on the same database: seen once the cached entry expires.
      await other.markTenantDeleted('c', now, now);
      await new Promise((r) => setTimeout(r, TENANT_CACHE_MS + 50));
      await ingest.handle(topic('4', 'c'), event('4'));
      assert.is(rejected('tenant_deleted'), 2);
      await other.restoreTenant('c');
      // A tenant created after a message for it was refused is taken at once (unknown ones are not cached).
      await ingest.handle(topic('5', 'n'), event('5'));
      assert.is(rejected('unknown_tenant'), 1);
      await other.ensureTenant('n', now);
      await ingest.handle(topic('6', 'n'), event('6'));
      assert.is(await store.countEvents('n', 'telemetry'), 1);
      // Duplicates inside one batch and across batches are stored once.
      await Promise.all(['d', 'd', '3', 'e', 'd'].map((id) => ingest.handle(topic(id, 'c'), event(id))));
      assert.is(await store.countEvents('c', 'telemetry'), 4);
      assert.match(metrics.render(), /fieldbridge_hub_ingest_total\{kind="telemetry",result="duplicate"\} 3/);
      // PostgreSQL refuses a NUL character in text; SQLite stores it. Either way the rest of the batch is stored.
      await Promise.all(['p1', 'nul\u0000id', 'p2'].map((id) => ingest.handle(topic(id, 'c'), event(id))));
      assert.is(await store.countEvents('c', 'telemetry'), store.dialect === 'postgres' ? 6 : 7);
      assert.is(rejected('store_failed'), store.dialect === 'postgres' ? 1 : 0);
    } finally {
      await ingest.close();
      await other.close();
      await store.close();
      await harness.cleanup();
    }
  });
}

test.run();
