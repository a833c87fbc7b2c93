import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Connection, TCPConnection, TransportKeyUtil } from '@liamcottle/meshcore.js';
import { hex, regionKey } from '../../../../src/bearers/meshcore/codec/index.ts';
import { MeshCoreDevice } from '../../../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../../../src/bearers/meshcore/simulator/mesh.ts';
import { SimRepeater } from '../../../../src/bearers/meshcore/simulator/repeater.ts';
import { serveMeshCoreTcp } from '../../../../src/bearers/meshcore/simulator/serve.ts';
import { waitFor } from './helpers.ts';

// The independent check of flood scopes (docs/protocols/meshcore.md 6.12): meshcore.js 1.13
// derives a region's key with its own TransportKeyUtil and sets and clears the radio's scope
// with its setFloodScope / clearFloodScope (CMD_SET_FLOOD_SCOPE_KEY variant 0) over TCP; the
// simulated repeater between its radio and another (`region denyf *`, "de-by" allowed) lets
// the channel text through only while the scope is set. meshcore.js 1.13 has no command for
// the default scope (63, 64) nor the unscoped variant (54 01): those are checked against the
// firmware source only (test/bearers/meshcore/codec/scope.test.ts).

function withTimeout<T>(p: Promise<T>, what: string, ms = 3000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`meshcore.js: timed out waiting for ${what}`)), ms))),
  ]);
}

async function open(connection: Connection): Promise<void> {
  const connected = new Promise<void>((resolve) => connection.once('connected', () => resolve()));
  await connection.connect();
  await withTimeout(connected, 'connected');
}

test('meshcore.js sets the flood scope by its own key of "#de-by"; the scoped repeater passes the text only then', async () => {
  const mesh = new MeshCoreMesh();
  const repeater = new SimRepeater({ sites: ['north', 'south'], allow: ['de-by'], denyUnscoped: true });
  mesh.addRepeater(repeater);
  const alice = new MeshCoreDevice({ name: 'alice', mesh, site: 'north' });
  const bob = new MeshCoreDevice({ name: 'bob', mesh, site: 'south', defaultFloodScope: { name: 'de-by', key: regionKey('de-by') } });
  const heard: string[] = [];
  bob.on('received-channel', (r: { text: string }) => heard.push(r.text));
  const transport = await serveMeshCoreTcp(alice, { port: 0 });
  const m = /^tcp:\/\/([^:]+):(\d+)$/.exec(transport.device)!;
  const client = new TCPConnection(m[1], Number(m[2]));
  try {
    await open(client);
    const whole = await TransportKeyUtil.getHashtagRegionKey('de-by');
    assert.is(hex(whole.subarray(0, 16)), hex(regionKey('de-by')), 'meshcore.js and we derive the same key');

    await withTimeout(client.sendChannelTextMessage(0, 'unscoped'), 'channel OK');
    await waitFor('the repeater drops it', () => repeater.counters.droppedUnscoped === 1);

    await withTimeout(client.setFloodScope(whole.subarray(0, 16)), 'set flood scope');
    assert.is(hex(alice.scope.session ?? new Uint8Array(0)), hex(regionKey('de-by')), 'the radio holds the scope meshcore.js gave it');
    await withTimeout(client.sendChannelTextMessage(0, 'scoped'), 'channel OK');
    await waitFor('bob hears the scoped text', () => heard.length === 1);

    // The whole 32-byte hash, as the library's own example would pass it: the firmware reads 16.
    await withTimeout(client.setFloodScope(whole), 'set flood scope with 32 bytes');
    assert.is(hex(alice.scope.session ?? new Uint8Array(0)), hex(regionKey('de-by')));

    await withTimeout(client.clearFloodScope(), 'clear flood scope');
    assert.is(alice.scope.session, null);
    await withTimeout(client.sendChannelTextMessage(0, 'unscoped again'), 'channel OK');
    await waitFor('the repeater drops it', () => repeater.counters.droppedUnscoped === 2);
    assert.equal(heard, ['alice: scoped']);
  } finally {
    client.close();
    await transport.close();
    alice.close();
    bob.close();
  }
});

test.run();
