import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { waitUntil } from '../../helpers/api.ts';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createRule, createSim, sendText } from '../../helpers/routing.ts';

// /metrics series of one interface (src/bridge/engine/metrics.ts, issue 14 item 13): labelled
// with the name the operator wrote as `interface` and the id as `interface_id`.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

const metrics = async () => (await t.call('GET', '/metrics')).text;

test('bearer errors, queue depth, queue by precedence and evictions name the interface and keep its id', async () => {
  // A link that refuses every send (retryable) and queues at most one delivery.
  const sat = await createSim(t.call, 'sat-link', { device: 'sim://metrics', settings: { behaviour: 'fail' }, retry: { queue_max_deliveries: 1 } });
  await createRule(t.call, 'to-sat', { action: 'forward', destinations: [{ interface: 'sat-link', to: 'ops' }] });
  const labels = `interface="sat-link",interface_id="${sat.id}"`;
  await sendText(t.call, 'ops', 'first');
  // At least one: on a loaded machine the retry may have failed too before the first look.
  const errors = new RegExp(`^fieldbridge_bearer_errors_total\\{${labels}\\} [1-9]\\d*$`, 'm');
  await waitUntil('a failed attempt counted', async () => errors.test(await metrics()));
  await sendText(t.call, 'ops', 'second: evicts the first');
  const text = await waitUntil('an eviction counted', async () => {
    const m = await metrics();
    return m.includes(`fieldbridge_evictions_total{${labels}} 1\n`) && m;
  });
  assert.ok(text.includes(`fieldbridge_queue_depth{${labels}} 1\n`), text);
  assert.match(text, new RegExp(`^fieldbridge_queue_by_precedence\\{${labels},precedence="routine",state="(pending|retrying|sending)"\\} 1$`, 'm'));
  assert.not.match(text, /interface="ifc_/, 'no series is labelled by id alone');
});

test('an interface with an empty queue has a queue depth sample of 0', async () => {
  const idle = await createSim(t.call, 'idle-link');
  assert.ok((await metrics()).includes(`fieldbridge_queue_depth{interface="idle-link",interface_id="${idle.id}"} 0\n`));
});

test.run();
