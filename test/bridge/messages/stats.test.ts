import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestBridge, type TestBridge } from '../../helpers/bridge.ts';
import { createSim, sendText } from '../../helpers/routing.ts';

// GET /api/messages/stats counts by interface under the name the operator wrote
// (src/bridge/engine/message-store.ts stats(); issue 14 item 13), with the ids alongside.

let t: TestBridge;
test.before(async () => {
  t = await startTestBridge();
});
test.after(async () => {
  await t.stop();
});

test('by_interface is keyed by interface name, by_interface_id by id; API sends count under (none)', async () => {
  const mesh = await createSim(t.call, 'mesh-north');
  const gone = await createSim(t.call, 'mesh-old');
  for (const [iface, n] of [['mesh-north', 2], ['mesh-old', 1]] as const) {
    for (let i = 0; i < n; i++) {
      const r = await t.call('POST', '/api/messages/simulate-mesh-rx', { body: { from: '!a1b2c3d4', text: `hello ${i}`, interface: iface } });
      assert.is(r.status, 202, r.text);
    }
  }
  await sendText(t.call, '!a1b2c3d4', 'from the API');
  assert.is((await t.call('DELETE', `/api/interfaces/${gone.id}`)).status < 300, true);
  const r = await t.call('GET', '/api/messages/stats');
  assert.is(r.status, 200, r.text);
  assert.is(r.body.total, 4);
  assert.equal(r.body.by_interface, { 'mesh-north': 2, [gone.id]: 1, '(none)': 1 }, 'a deleted interface counts under its id');
  assert.equal(r.body.by_interface_id, { [mesh.id]: 2, [gone.id]: 1, '(none)': 1 });
});

test.run();
