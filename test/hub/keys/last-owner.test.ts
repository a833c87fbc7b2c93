import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HubKeyService } from '../../../src/hub/keys/service.ts';
import { type HubStore, openHubStore } from '../../../src/hub/store/store.ts';
import { AppError } from '../../../src/lib/errors.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { postgresHarness, sqliteHarness, type StoreHarness } from '../store-harness.ts';

// Issue 15 item 4: two owners deleting each other's keys at the same moment must not both
// succeed and leave the tenant without an owner key. Each round runs the two deletions at
// once, through two stores on one database (two hub replicas), on both databases.

const ROUNDS = 8;

for (const harness of [sqliteHarness(), postgresHarness()] as StoreHarness[]) {
  test(`[${harness.name}] of two owners deleting each other's keys at once, one wins and one gets ERR_LAST_OWNER_KEY`, async () => {
    const location = await harness.freshLocation();
    const stores: HubStore[] = [await openHubStore(location), await openHubStore(location)];
    try {
      const clock = new FakeClock();
      const [one, two] = stores.map((s) => new HubKeyService(s, clock));
      for (let round = 0; round < ROUNDS; round++) {
        const tenant = `t${round}`;
        const a = await one.create(tenant, 'owner a', 'owner');
        const b = await one.create(tenant, 'owner b', 'owner');
        await one.create(tenant, 'an admin', 'admin');
        const outcomes = await Promise.allSettled([one.delete(tenant, b.id), two.delete(tenant, a.id)]);
        const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
        assert.is(refused.length, 1, `round ${round}: exactly one deletion is refused (${outcomes.map((o) => o.status).join(', ')})`);
        assert.instance(refused[0], AppError);
        assert.is((refused[0] as AppError).code, 'ERR_LAST_OWNER_KEY');
        assert.is(await stores[0].countKeys({ tenantId: tenant, role: 'owner' }), 1, `round ${round}: one owner key left`);
      }
    } finally {
      for (const s of stores) await s.close();
      await harness.cleanup();
    }
  });
}

test('deleting a missing key, another tenant\'s key, or an admin key beside the last owner', async () => {
  const harness = sqliteHarness();
  const store = await openHubStore(await harness.freshLocation());
  try {
    const keys = new HubKeyService(store, new FakeClock());
    const owner = await keys.create('t', 'owner', 'owner');
    const admin = await keys.create('t', 'admin', 'admin');
    const elsewhere = await keys.create('u', 'owner', 'owner');
    for (const id of ['key_nope', elsewhere.id]) {
      try {
        await keys.delete('t', id);
        assert.unreachable('deleted');
      } catch (error) {
        assert.is((error as AppError).code, 'ERR_NOT_FOUND');
      }
    }
    await keys.delete('t', admin.id);
    assert.equal((await keys.list('t')).map((k) => k.id), [owner.id]);
    assert.is((await keys.list('u')).length, 1);
  } finally {
    await store.close();
    await harness.cleanup();
  }
});

test.run();
