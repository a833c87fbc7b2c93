import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type BatchOp, openHubStore } from '../../../src/hub/store/store.ts';
import { isRowError } from '../../../src/hub/store/ingest-batch.ts';
import { ackCovers, ackView, addRanges, MAX_RANGES, toRanges } from '../../../src/hubwire/topics.ts';
import { postgresHarness, sqliteHarness } from '../store-harness.ts';

// Issue 15: the hub's record of each bridge's sequence numbers (bridge_seqs) and what an ack
// says of it. The range arithmetic is pure; the store merges under the row's lock, so two
// replicas writing the same bridge at once keep each other's numbers (on PostgreSQL the
// bridges row's last_seen upsert already orders their transactions; bridge_seqs' own upsert
// takes its row lock as well, so the merge does not depend on that).

test('ranges: stored numbers fold into upto; gaps are what is asked for; an ack never claims a gap', () => {
  let s = addRanges({ upto: 0, ranges: [] }, toRanges([1, 2, 3, 5, 6, 9]));
  assert.equal(s, { upto: 3, ranges: [[5, 6], [9, 9]] });
  assert.equal(ackView(s), { upto: 3, high: 9, missing: [[4, 4], [7, 8]] });
  s = addRanges(s, [[4, 4], [7, 8]]);
  assert.equal(s, { upto: 9, ranges: [] });
  assert.equal(addRanges(s, [[2, 5]]), s, 'numbers below upto change nothing');
  // More gaps than one ack names: high stops just below the first gap left out.
  const many = addRanges({ upto: 0, ranges: [] }, Array.from({ length: 100 }, (_, i) => [2 * i + 2, 2 * i + 2] as [number, number]));
  const view = ackView(many);
  assert.is(view.missing.length, MAX_RANGES);
  assert.is(view.high, 2 * MAX_RANGES);
  for (let n = 1; n <= 250; n++) assert.is(ackCovers(view, n), n <= view.high && n % 2 === 0, String(n));
  // The tracked ranges are bounded: the highest are forgotten, never claimed.
  const bounded = addRanges({ upto: 0, ranges: [] }, Array.from({ length: 10 }, (_, i) => [3 * i + 2, 3 * i + 2] as [number, number]), 4);
  assert.equal(bounded.ranges, [[2, 2], [5, 5], [8, 8], [11, 11]]);
});

for (const make of [sqliteHarness, postgresHarness]) {
  test(`${make().name}: two replicas writing one bridge's numbers at once keep both; statuses by connection`, async () => {
    const harness = make();
    const location = await harness.freshLocation();
    const a = await openHubStore(location);
    const b = await openHubStore(location);
    try {
      await a.ensureTenant('t', '2026-01-01T00:00:00.000Z');
      const ev = (seq: number): BatchOp => ({ op: 'event', seq, event: { table: 'telemetry', tenant_id: 't', event_id: `e${seq}`, bridge_id: 'brg-1', ts: '2026-01-01T00:00:00.000Z', body: '{}', received_at: '2026-01-01T00:00:01.000Z' } });
      // Odd numbers through one replica, even through the other, in 20 concurrent batches each.
      await Promise.all(
        Array.from({ length: 20 }, (_, k) => [
          a.ingestBatch(Array.from({ length: 10 }, (_, i) => ev(20 * k + 2 * i + 1))),
          b.ingestBatch(Array.from({ length: 10 }, (_, i) => ev(20 * k + 2 * i + 2))),
        ]).flat(),
      );
      const last = await a.ingestBatch([{ op: 'gone', tenantId: 't', bridgeId: 'brg-1', ranges: [[402, 405]], at: '2026-01-01T00:00:02.000Z' }]);
      assert.equal(last.acks, [{ tenantId: 't', bridgeId: 'brg-1', upto: 400, ranges: [[402, 405]], seen: 405 }]);
      assert.is(await a.countEvents('t', 'telemetry'), 400);
      // An online is answered with the state and its conn (the handshake), even with no events.
      const hello = await b.ingestBatch([{ op: 'status', tenantId: 't', bridgeId: 'brg-2', state: 'online', session: 1, ts: '2026-01-01T00:00:00.000Z', at: '2026-01-01T00:00:00.000Z', conn: 'c1' }]);
      assert.equal(hello.acks, [{ tenantId: 't', bridgeId: 'brg-2', upto: 0, ranges: [], seen: 0, conn: 'c1' }]);
    } finally {
      await a.close();
      await b.close();
      await harness.cleanup();
    }
  });
}

for (const make of [sqliteHarness, postgresHarness]) {
  // Issue 15 review item 1: seq goes up to 2^53; bridge_seqs.upto and seen were INTEGER, 32 bits
  // on PostgreSQL, and one number past 2^31 failed the whole batch (22003) over and over.
  test(`${make().name}: sequence numbers past 2^31, up to 2^53 - 1, are stored and acknowledged`, async () => {
    const harness = make();
    const store = await openHubStore(await harness.freshLocation());
    try {
      await store.ensureTenant('t', '2026-01-01T00:00:00.000Z');
      const ev = (seq: number): BatchOp => ({ op: 'event', seq, event: { table: 'telemetry', tenant_id: 't', event_id: `e${seq}`, bridge_id: 'brg-big', ts: '2026-01-01T00:00:00.000Z', body: '{}', received_at: '2026-01-01T00:00:01.000Z' } });
      const big = 3_000_000_000;
      const first = await store.ingestBatch([ev(big), ev(big + 2)]);
      assert.equal(first.acks, [{ tenantId: 't', bridgeId: 'brg-big', upto: 0, ranges: [[big, big], [big + 2, big + 2]], seen: big + 2 }]);
      const top = Number.MAX_SAFE_INTEGER;
      const last = await store.ingestBatch([{ op: 'gone', tenantId: 't', bridgeId: 'brg-big', ranges: [[1, big - 1], [big + 1, big + 1]], at: '2026-01-01T00:00:02.000Z' }, ev(top)]);
      assert.equal(last.acks, [{ tenantId: 't', bridgeId: 'brg-big', upto: big + 2, ranges: [[top, top]], seen: top }]);
      assert.is(await store.countEvents('t', 'telemetry'), 3);
    } finally {
      await store.close();
      await harness.cleanup();
    }
  });
}

test('22003 (a number out of its column\'s range) is a row error: the batch is halved, not wedged', () => {
  assert.ok(isRowError('postgres', { code: '22003' }));
  assert.not.ok(isRowError('postgres', { code: '40P01' }), 'a deadlock is not');
});

test.run();
