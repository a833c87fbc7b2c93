import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus, liftSendLimit, type RestartableBridge, startBridgeProcess, waitUntil } from '../helpers/api.ts';

// Issue 4 acceptance, against the real process: fan-out (one delivery per destination, each
// with its own outcome, kept across a restart) and first match (order decides; a disabled rule
// is skipped and, enabled again, decides exactly as before from the same place).

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
let bridge: RestartableBridge;
const ok = (method: string, path: string, body?: unknown) => expectStatus(bridge.call, 200, method, path, body);
const created = (path: string, body: unknown) => expectStatus(bridge.call, 201, 'POST', path, body);
const send = (to: string, text: string) => expectStatus(bridge.call, 202, 'POST', '/api/messages/send', { to, text });
const FINAL = ['delivered', 'dead', 'cancelled', 'expired'];

test.before(async () => {
  bridge = await startBridgeProcess(join(dir, 'bridge.db'));
  await liftSendLimit(bridge.call);
});

test.after(async () => {
  await bridge?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('fan-out: three destinations make three deliveries, each with its own outcome, still listed after a restart', async () => {
  const a = await created('/api/interfaces', { name: 'sim-a', kind: 'sim', device: 'sim://fan' });
  const b = await created('/api/interfaces', { name: 'sim-b', kind: 'sim', device: 'sim://fan' });
  const c = await created('/api/interfaces', {
    name: 'sim-broken', kind: 'sim', device: 'sim://fan', settings: { behaviour: 'fail' }, retry: { base_s: 0.01, cap_s: 0.05, max_attempts: 3 },
  });
  const rule = await created('/api/access-rules', {
    name: 'fan-out', match: { direction: 'outbound', to: ['!fan0000'] }, schedule: null, action: 'forward',
    destinations: [{ interface: 'sim-a', to: '!aaaa0001' }, { interface: 'sim-b', to: '{to}' }, { interface: 'sim-broken', to: '!cccc0003' }],
  });

  const sent = await send('!fan0000', 'three ways');
  assert.is(sent.message.decision.rule_id, rule.id);
  assert.is(sent.message.action, 'forward');
  assert.is(sent.deliveries.length, 3);
  assert.equal(
    sent.deliveries.map((d: any) => [d.interface_id, d.to]).sort(),
    [[a.id, '!aaaa0001'], [b.id, '!fan0000'], [c.id, '!cccc0003']].sort(),
  );

  const path = `/api/deliveries/message/${sent.message.id}`;
  const final = await waitUntil('every delivery to finish', async () => {
    const items = (await ok('GET', path)).items;
    return items.every((d: any) => FINAL.includes(d.state)) ? items : undefined;
  });
  const byInterface = Object.fromEntries(final.map((d: any) => [d.interface_id, d]));
  assert.is(byInterface[a.id].state, 'delivered');
  assert.is(byInterface[a.id].attempts, 1);
  assert.is(byInterface[b.id].state, 'delivered');
  assert.is(byInterface[c.id].state, 'dead');
  assert.is(byInterface[c.id].attempts, 3);
  assert.match(byInterface[c.id].last_error, /simulated failure \(behaviour fail\)/);
  const statsBefore = await ok('GET', '/api/deliveries/stats');

  assert.is(await bridge.stop(), 0);
  await bridge.start();
  const after = (await ok('GET', path)).items;
  assert.equal(after, final, 'the same three deliveries, same outcomes, after a restart');
  const dead = (await ok('GET', '/api/deliveries?state=dead')).items;
  assert.equal(dead.map((d: any) => d.id), [byInterface[c.id].id], 'the dead letter is in the queue');
  assert.equal(await ok('GET', '/api/deliveries/stats'), statsBefore);
  const health = (await ok('GET', '/api/interfaces/health')).items;
  assert.ok(health.every((h: any) => h.connected), 'every interface reconnected after the restart');
});

test('first match: reordering changes which rule fires; a disabled rule is skipped and re-enabled from the same place', async () => {
  const rule = (name: string, match: Record<string, unknown>, action = 'store') => created('/api/access-rules', { name, match: { direction: 'outbound', ...match }, schedule: null, action });
  const broad = await rule('broad', { text: { contains: 'ping' } });
  const narrow = await rule('narrow', { to: ['!first000'] }, 'drop');
  const other = await rule('unrelated', { to: ['!nobody00'] });
  const fired = async () => {
    const r = await send('!first000', 'ping');
    return { id: r.message.decision.rule_id, action: r.message.action, reason: r.message.decision.reason };
  };
  const stats = async (id: string) => (await ok('GET', `/api/access-rules/${id}/stats`)).fired;

  let d = await fired();
  assert.is(d.id, broad.id, 'the earlier rule decides even though a later one matches too');
  assert.is(d.action, 'store');
  assert.match(d.reason, /rule 'broad' matched: direction outbound, text contains 'ping'/);

  const ids = (await ok('GET', '/api/access-rules')).items.map((r: any) => r.id);
  const order = [narrow.id, ...ids.filter((id: string) => id !== narrow.id)];
  const reordered = (await ok('POST', '/api/access-rules/reorder', { order })).items;
  assert.equal(reordered.map((r: any) => r.id), order);
  assert.equal(reordered.map((r: any) => r.priority), order.map((_, i) => i + 1));
  d = await fired();
  assert.is(d.id, narrow.id, 'after the reorder the other rule fires');
  assert.is(d.action, 'drop');
  assert.is(await stats(narrow.id), 1);
  assert.is(await stats(broad.id), 1);

  const disabled = await ok('POST', `/api/access-rules/${narrow.id}/disable`);
  assert.is(disabled.priority, 1, 'keeps its place');
  d = await fired();
  assert.is(d.id, broad.id, 'a disabled rule is skipped');
  assert.is(await stats(narrow.id), 1);
  assert.is(await stats(broad.id), 2);

  const enabled = await ok('POST', `/api/access-rules/${narrow.id}/enable`);
  assert.is(enabled.priority, 1);
  assert.equal({ ...enabled, enabled: undefined, updated_at: undefined }, { ...reordered[0], enabled: undefined, updated_at: undefined }, 'the rule is exactly as before');
  d = await fired();
  assert.is(d.id, narrow.id, 'behaves exactly as before at the same position');
  assert.is(d.action, 'drop');
  assert.is(await stats(narrow.id), 2, 'stats kept across disable and enable');
  assert.is(await stats(other.id), 0, 'a rule that never matched never fired');

  // /stats is kept across a restart too.
  assert.is(await bridge.stop(), 0);
  await bridge.start();
  assert.is(await stats(narrow.id), 2);
  assert.is(await stats(broad.id), 2);
  const last = (await ok('GET', `/api/access-rules/${narrow.id}/stats`)).last_fired_at;
  assert.ok(last && !Number.isNaN(Date.parse(last)));
});

test.run();
