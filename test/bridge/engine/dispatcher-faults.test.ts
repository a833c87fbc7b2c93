import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { newDelivery } from '../../../src/bridge/engine/admission.ts';
import { Dispatcher } from '../../../src/bridge/engine/dispatcher.ts';
import { DeliveryStore } from '../../../src/bridge/engine/delivery-store.ts';
import { GROUP_COMMIT_MS, WriteBehind } from '../../../src/bridge/engine/write-behind.ts';
import { transaction } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { EventStream } from '../../../src/lib/events.ts';
import { createLogger } from '../../../src/lib/log.ts';

// What the dispatcher does when the database fails it where nothing may throw: after a group
// of delivery states commits, it reads when the next TTL falls due (written-behind states wake
// it from inside the COMMIT or from the write-behind's timer). A throw there ended the process
// and left the commit's other waiters unanswered (review).

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real database, write-behind, store and dispatcher (not started: nothing is sent, so the
 *  host is never asked for a bearer), one delivery waiting, and the log lines. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'fb-dispatch-'));
  const db = openBridgeDatabase(join(dir, 'b.db'));
  const lines: string[] = [];
  const log = createLogger({ level: 'error', format: 'json', write: (line) => void lines.push(line) });
  const wb = new WriteBehind(db, log);
  const events = new EventStream<never>();
  const store = new DeliveryStore(db, wb, events as never);
  const dispatcher = new Dispatcher({ store, writeBehind: wb, host: {} as never, events: events as never, interfaces: { find: () => undefined }, clock: systemClock, log });
  const d = newDelivery({ message: { id: 'msg_f', from: 'local', channel: null, kind: 'text', text: 'x', payload: null }, precedence: 4, nowMs: Date.now() }, { id: 'ifc_a', retry: {} }, 'peer');
  transaction(db, () => store.insert(d));
  const close = () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { db, wb, store, dispatcher, d, lines, close };
}

test('a read that fails after a commit is logged and tried again in a second, never thrown out of the timer', async () => {
  const { db, wb, dispatcher, d, lines, close } = setup();
  const thrown: unknown[] = [];
  const onUncaught = (error: unknown) => void thrown.push(error);
  process.on('uncaughtException', onUncaught);
  try {
    // A retry (it wakes the queue once committed) whose own write leaves the deliveries table
    // unreadable: the commit succeeds, the read of the next expiry after it fails for real.
    wb.defer(d.id, 'ifc_a', () => db.exec('ALTER TABLE deliveries RENAME TO deliveries_gone'), true);
    // A retry commits at the next turn (the write-behind's own timer, GROUP_COMMIT_MS at the
    // latest); the failed read's retry comes a second later.
    for (let waited = 0; !lines.some((l) => l.includes('"expiry_failed"')) && waited < GROUP_COMMIT_MS + 500; waited += 10) await sleep(10);
    assert.equal(thrown, [], 'nothing thrown out of the timer');
    const failed = () => lines.filter((l) => l.includes('"expiry_failed"'));
    assert.is(failed().length, 1, lines.join('\n'));
    assert.match(failed()[0], /no such table: deliveries/);
    assert.match(failed()[0], /retrying in 1 s/);
    db.exec('ALTER TABLE deliveries_gone RENAME TO deliveries');
    await sleep(1200); // the retry reads again, and now succeeds
    assert.equal(thrown, []);
    assert.is(failed().length, 1, 'no further failure once the table reads again');
  } finally {
    process.off('uncaughtException', onUncaught);
    await dispatcher.stop(0);
    close();
  }
});

test('stopping while delivery states cannot be written says how many are left to be sent again', async () => {
  const { db, wb, store, dispatcher, d, lines, close } = setup();
  try {
    db.exec('PRAGMA query_only = ON'); // as a file system remounted read-only
    wb.deferSending(d.id, 'ifc_a', 1, () => store.markSending(d.id, 1));
    await dispatcher.stop(0);
    const line = lines.find((l) => l.includes('"delivery_states_unwritten_at_stop"'));
    assert.ok(line, lines.join('\n'));
    assert.match(line!, /"deliveries":1/);
    db.exec('PRAGMA query_only = OFF');
    assert.is((db.prepare('SELECT state FROM deliveries WHERE id = ?').get(d.id) as { state: string }).state, 'pending', 'it reads as waiting: sent again after a restart');
  } finally {
    close();
  }
});

test.run();
