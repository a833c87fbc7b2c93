import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBridgeDatabase } from '../../../src/bridge/app.ts';
import { admit, newDelivery } from '../../../src/bridge/engine/admission.ts';
import { nodeKey } from '../../../src/bridge/engine/node-key.ts';
import { DeliveryStore } from '../../../src/bridge/engine/delivery-store.ts';
import { WriteBehind } from '../../../src/bridge/engine/write-behind.ts';
import { EventStream } from '../../../src/lib/events.ts';
import { createLogger } from '../../../src/lib/log.ts';

// Queue admission (src/bridge/engine/admission.ts) on a real database: a full queue gives up
// its lowest-precedence oldest waiting delivery, never one the dispatcher has just taken (its
// 'sending' mark still in the write-behind), never override or flash; and the node-key
// spelling that until_heard is matched by.

const quiet = createLogger({ level: 'error', format: 'json', write: () => {} });

test('a full queue evicts the oldest routine delivery that is not on the air; urgent ones are never candidates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-admit-'));
  const db = openBridgeDatabase(join(dir, 'b.db'));
  try {
    const wb = new WriteBehind(db, quiet);
    const store = new DeliveryStore(db, wb, new EventStream());
    const iface = { id: 'ifc_a', name: 'a', retry: { queue_max_deliveries: 3 } };
    let now = Date.parse('2026-01-01T00:00:00Z');
    const make = (precedence: number) => newDelivery({ message: { id: `msg_${now}`, from: 'local', channel: null, kind: 'text', text: 'x', payload: null }, precedence, nowMs: now++ }, iface, 'peer');
    const [onAir, second, flash] = [make(4), make(4), make(1)];
    for (const d of [onAir, second, flash]) store.insert(d);
    // The dispatcher took the oldest: its mark is deferred, the row still says pending.
    wb.deferSending(onAir.id, iface.id, now, () => {});
    const newcomer = make(4);
    assert.is(admit(store, newcomer, iface, now), null, 'admitted');
    assert.is(store.get(second.id)!.state, 'dead', 'the oldest routine delivery not on the air went');
    assert.match(store.get(second.id)!.last_error ?? '', /^evicted: queue full \(cap 3\) by message msg_/);
    assert.is(store.get(onAir.id)!.state !== 'dead', true, 'the one on the air stays');
    assert.is(store.get(flash.id)!.state, 'pending');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('node keys: every spelling of a Meshtastic node id is one key; other names compare in lower case', () => {
  for (const a of ['!0000beef', '!BEEF', '0xbeef', '0x0000BEEF', '48879', ' !beef ']) assert.is(nodeKey(a), '!0000beef', a);
  assert.is(nodeKey('!a1b2c3d4'), '!a1b2c3d4');
  assert.is(nodeKey('4294967295'), '!ffffffff');
  assert.is(nodeKey('4294967296'), '4294967296', 'past 32 bits: not a node number');
  assert.is(nodeKey('Hiker-LoRa'), 'hiker-lora');
});

test.run();
