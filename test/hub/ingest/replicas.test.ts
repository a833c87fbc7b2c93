import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { uplinkMigrationSql } from '../../../src/bridge/uplink/schema.ts';
import { UplinkPublisher } from '../../../src/bridge/uplink/publisher.ts';
import { openSqlite } from '../../../src/db/sqlite.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { silentLogger } from '../../../src/lib/log.ts';
import { startTestHub, type TestHub } from '../helper.ts';
import { eventually, privateBroker } from '../mosquitto.ts';
import { postgresHarness } from '../store-harness.ts';

// Hosted scale-out (docs/design.md section 8): two hub replicas on one PostgreSQL database read
// through the shared subscription $share/hub/...: each event is stored once. A private broker,
// so no other test file's hub joins the "hub" share group.

test('two replicas with HUB_MQTT_SHARED store each of 300 events once, and both take part', async () => {
  const pg = postgresHarness();
  const broker = await privateBroker();
  const dir = mkdtempSync(join(tmpdir(), 'fb-'));
  const hubs: TestHub[] = [];
  const db = openSqlite(join(dir, 'bridge.db'));
  db.exec(uplinkMigrationSql);
  let publisher: UplinkPublisher | undefined;
  try {
    const location = await pg.freshLocation();
    for (const name of ['a', 'b']) {
      hubs.push(await startTestHub({ store: location, mqtt: { url: broker.url, shared: true, acceptUnenrolled: true, clientId: `replica-${name}` } }));
    }
    await hubs[0].hub.store.ensureTenant('acme', new Date().toISOString());
    await eventually(() => hubs.every((h) => h.hub.ingest!.state() === 'connected'), 'both subscribed');
    publisher = new UplinkPublisher({
      db,
      log: silentLogger,
      clock: systemClock,
      config: { mqtt_url: broker.url, tenant: 'acme', bridge_id: 'brg-1' },
      version: '1.0.0',
      interfaces: () => [],
    });
    publisher.start();
    for (let i = 0; i < 300; i++) publisher.enqueue('telemetry', { n: i });
    await eventually(async () => (await hubs[0].hub.store.countEvents('acme', 'telemetry')) === 300, '300 stored');
    await eventually(() => publisher!.pending() === 0, 'outbox empty');
    const storedBy = () => hubs.map((h) => Number(/fieldbridge_hub_ingest_total\{kind="telemetry",result="stored"\} (\d+)/.exec(h.hub.metrics.render())?.[1] ?? 0));
    // A replica counts an event just after its insert commits: wait for the counters too.
    await eventually(() => storedBy()[0] + storedBy()[1] >= 300, 'both counters settled');
    const stored = storedBy();
    const duplicates = hubs.map((h) => /kind="telemetry",result="duplicate"/.test(h.hub.metrics.render()));
    assert.is(stored[0] + stored[1], 300, `each stored by one replica (${stored.join(' + ')})`);
    assert.ok(stored[0] > 0 && stored[1] > 0, `both replicas took a share (${stored.join(' + ')})`);
    assert.equal(duplicates, [false, false]);
  } finally {
    await publisher?.close();
    db.close();
    for (const h of hubs) await h.stop();
    await broker.dispose();
    await pg.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
