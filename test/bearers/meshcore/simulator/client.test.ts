import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Constants, NodeJSSerialConnection, TCPConnection } from '@liamcottle/meshcore.js';
import type { InboundFrame } from '../../../../src/bearers/bearer.ts';
import { hex } from '../../../../src/bearers/meshcore/codec/index.ts';
import { MeshCoreBearer } from '../../../../src/bearers/meshcore/driver.ts';
import { meshcoreSimMesh, openMeshCoreSimLink } from '../../../../src/bearers/meshcore/simulator/link.ts';
import { systemClock } from '../../../../src/lib/clock.ts';
import { createLogger } from '../../../../src/lib/log.ts';
import { bearerContext } from '../../../helpers/bearer-context.ts';
import { MeshCoreDevice } from '../../../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../../../src/bearers/meshcore/simulator/mesh.ts';
import { serveMeshCorePty, serveMeshCoreTcp } from '../../../../src/bearers/meshcore/simulator/serve.ts';
import type { SimTransport } from '../../../../src/bearers/shared/simulators/pty.ts';
import { nowSeconds, ptyHost, type TestHost, waitFor } from './helpers.ts';

// The independent check (issue 21 item 7): the MeshCore JavaScript client @liamcottle/
// meshcore.js 1.13 (MIT) talks to our simulated companion radio over TCP and over a pty,
// through its own framing and parsers. It starts the session, reads self info, device info,
// channels and contacts, sends a direct message that another simulated node's host receives
// (acknowledged with SEND_CONFIRMED), receives one back, and sends a channel message. Where
// the client and the simulator disagree, the simulator is wrong until shown otherwise
// (docs/protocols/meshcore.md 6.9 lists what was checked).

const keyHex = (k: Uint8Array) => hex(k);

async function open(connection: Connection): Promise<void> {
  // meshcore.js sends CMD_DEVICE_QUERY (version 1) on connecting and emits "connected" once
  // DEVICE_INFO has come back.
  const connected = new Promise<void>((resolve) => connection.once('connected', () => resolve()));
  await connection.connect();
  await withTimeout(connected, 'connected');
}

function withTimeout<T>(p: Promise<T>, what: string, ms = 3000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`meshcore.js: timed out waiting for ${what}`)), ms))),
  ]);
}

/** The next event `code` the client emits. */
function nextEvent(connection: Connection, code: number, what: string, ms = 3000): Promise<any> {
  return withTimeout(new Promise((resolve) => connection.once(code, resolve)), what, ms);
}

/** Runs the session a host makes and checks what meshcore.js read. */
async function startSession(client: Connection, device: MeshCoreDevice, peer: MeshCoreDevice): Promise<void> {
  const self = await client.getSelfInfo(3000);
  assert.is(self.name, device.name);
  assert.is(keyHex(self.publicKey), keyHex(device.publicKey));
  assert.is(self.radioFreq, 869525);
  assert.is(self.radioBw, 250000);
  assert.is(self.radioSf, 11);

  const info = await withTimeout(client.deviceQuery(1), 'device info');
  assert.is(info.firmwareVer, 13);
  // meshcore.js takes everything after the build date as the model: our 40-byte model field,
  // then the 20-byte version and two more bytes, NULs and all (docs 6.9).
  assert.is(info.firmware_build_date, '24 Nov 2026');
  assert.ok(String(info.manufacturerModel).startsWith('fieldbridge simulator\0'), JSON.stringify(info.manufacturerModel));

  await withTimeout(client.setDeviceTime(nowSeconds() + 1), 'set device time');
  // A time before the radio's clock is refused (docs 6.3): meshcore.js rejects on ERR.
  let refused = false;
  await withTimeout(client.setDeviceTime(1_000_000).catch(() => (refused = true)), 'refused time');
  assert.ok(refused);

  const channels = await withTimeout(client.getChannels(), 'channels');
  assert.is(channels.length, 8, 'getChannels stops at the ERR after the last slot');
  assert.is(channels[0].name, 'Public');
  assert.is(keyHex(channels[0].secret), '8b3387e9c5cdea6ac9e5edbaa115cd72');
  assert.is(channels[1].name, '');

  const contacts = await withTimeout(client.getContacts(), 'contacts');
  assert.is(contacts.length, 1);
  assert.is(contacts[0].advName, peer.name);
  assert.is(keyHex(contacts[0].publicKey), keyHex(peer.publicKey));
  assert.is(contacts[0].outPathLen, -1, 'no path yet (FF, read as a signed byte by meshcore.js)');

  assert.equal(await withTimeout(client.getWaitingMessages(), 'empty queue'), []);
}

/** Alice (meshcore.js) sends to Bob; Bob's host sees it; the ack comes back. */
async function directToPeer(client: Connection, peer: MeshCoreDevice, receive: () => Promise<{ text: string; prefix: string }>): Promise<void> {
  const confirmed = nextEvent(client, Constants.PushCodes.SendConfirmed, 'SEND_CONFIRMED');
  const sent = await withTimeout(client.sendTextMessage(peer.publicKey, 'hello bob'), 'SENT');
  assert.is(sent.result, 1, 'the first text to a contact without a path floods');
  assert.ok(sent.expectedAckCrc !== 0);
  assert.ok(sent.estTimeout > 500);
  const ack = await confirmed;
  assert.is(ack.ackCode, sent.expectedAckCrc, 'SEND_CONFIRMED carries the tag SENT announced');
  assert.ok(ack.roundTrip >= 0);
  const got = await receive();
  assert.is(got.text, 'hello bob');

  // The ack came with the path: the next text goes direct.
  const second = await withTimeout(client.sendTextMessage(peer.publicKey, 'again'), 'second SENT');
  assert.is(second.result, 0);
  assert.is((await receive()).text, 'again');
  // RESET_PATH makes it flood again.
  await withTimeout(client.resetPath(peer.publicKey), 'reset path');
  const third = await withTimeout(client.sendTextMessage(peer.publicKey, 'flood again'), 'third SENT');
  assert.is(third.result, 1);
  assert.is((await receive()).text, 'flood again');
}

/** Waits for MSG_WAITING, then drains with meshcore.js. */
async function receiveWithClient(client: Connection): Promise<any[]> {
  await nextEvent(client, Constants.PushCodes.MsgWaiting, 'MSG_WAITING');
  return withTimeout(client.getWaitingMessages(), 'waiting messages');
}

test('TCP: two meshcore.js clients on two simulated radios of one mesh', async () => {
  const mesh = new MeshCoreMesh();
  const alice = new MeshCoreDevice({ name: 'alice', mesh });
  const bob = new MeshCoreDevice({ name: 'bob', mesh });
  const transports: SimTransport[] = [await serveMeshCoreTcp(alice, { port: 0 }), await serveMeshCoreTcp(bob, { port: 0 })];
  const [a, b] = transports.map((t) => {
    const m = /^tcp:\/\/([^:]+):(\d+)$/.exec(t.device)!;
    return new TCPConnection(m[1], Number(m[2]));
  });
  try {
    await open(a);
    await open(b);
    await startSession(a, alice, bob);
    await startSession(b, bob, alice);

    // Alice to Bob, acknowledged; Bob's meshcore.js drains it.
    let bobWaiting = receiveWithClient(b);
    await directToPeer(a, bob, async () => {
      const [m] = await bobWaiting;
      bobWaiting = receiveWithClient(b);
      assert.is(keyHex(m.contactMessage.pubKeyPrefix), keyHex(alice.publicKey.subarray(0, 6)));
      assert.is(m.contactMessage.pathLen === 0 || m.contactMessage.pathLen === 0xff, true);
      return { text: m.contactMessage.text, prefix: keyHex(m.contactMessage.pubKeyPrefix) };
    });

    // Bob to Alice.
    const aliceWaiting = receiveWithClient(a);
    const confirmed = nextEvent(b, Constants.PushCodes.SendConfirmed, 'SEND_CONFIRMED to bob');
    const sent = await withTimeout(b.sendTextMessage(alice.publicKey, 'hello alice ✓'), 'SENT');
    assert.is((await confirmed).ackCode, sent.expectedAckCrc);
    const [m] = await aliceWaiting;
    assert.is(m.contactMessage.text, 'hello alice ✓');
    assert.is(keyHex(m.contactMessage.pubKeyPrefix), keyHex(bob.publicKey.subarray(0, 6)));
    assert.is(m.contactMessage.txtType, 0);

    // A channel message: OK for the sender, "<name>: text" on the other radio, no ack.
    await bobWaiting.catch(() => {});
    const channelWaiting = receiveWithClient(b);
    await withTimeout(a.sendChannelTextMessage(0, 'hi all'), 'channel OK');
    const [c] = await channelWaiting;
    assert.is(c.channelMessage.channelIdx, 0);
    assert.is(c.channelMessage.text, 'alice: hi all');
  } finally {
    a.close();
    b.close();
    for (const t of transports) await t.close();
    alice.close();
    bob.close();
  }
});

test('pty: meshcore.js over its Node serial connection, the other node\'s host on our codec', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-meshcore-js-'));
  const mesh = new MeshCoreMesh();
  const alice = new MeshCoreDevice({ name: 'alice', mesh });
  const bob = new MeshCoreDevice({ name: 'bob', mesh });
  const alicePty = await serveMeshCorePty(alice, { path: join(dir, 'alice') });
  const bobPty = await serveMeshCorePty(bob, { path: join(dir, 'bob') });
  const client = new NodeJSSerialConnection(alicePty.device);
  let host: TestHost | null = null;
  try {
    await open(client);
    await startSession(client, alice, bob);

    host = await ptyHost(bobPty.device);
    const h = host;
    h.send({ type: 'APP_START', appName: 'fieldbridge-test' });
    assert.is((await h.next('SELF_INFO')).name, 'bob');
    assert.is((await h.request({ type: 'DEVICE_QUERY', appTargetVersion: 3 }, 'DEVICE_INFO')).maxChannels, 8);

    await directToPeer(client, bob, async () => {
      await h.next('MSG_WAITING');
      const [m] = await h.drain();
      assert.is(m.type, 'CONTACT_MSG_RECV_V3', 'our host asked for version 3');
      if (m.type !== 'CONTACT_MSG_RECV_V3') throw new Error('unreachable');
      assert.is(m.snr, 6.25);
      return { text: m.text, prefix: hex(m.pubKeyPrefix) };
    });

    const waiting = receiveWithClient(client);
    const sent = await h.request(
      { type: 'SEND_TXT_MSG', txtType: 0, attempt: 0, timestamp: nowSeconds(), pubKeyPrefix: alice.publicKey.subarray(0, 6), text: 'from bob' },
      'SENT',
    );
    assert.is((await h.next('SEND_CONFIRMED')).ackCode, sent.expectedAck);
    const [m] = await waiting;
    assert.is(m.contactMessage.text, 'from bob');
    assert.is(keyHex(m.contactMessage.pubKeyPrefix), keyHex(bob.publicKey.subarray(0, 6)));
    // Alice's radio was asked for version 1 by meshcore.js: the plain format (no SNR).
    assert.is(alice.appTargetVersion, 1);
    await waitFor('both acks', () => alice.counters.confirmed === 3 && bob.counters.confirmed === 1);
  } finally {
    await host?.close();
    await client.close();
    await alicePty.close();
    await bobPty.close();
    alice.close();
    bob.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('meshcore.js and a bridge on one mesh: a direct message each way, the bridge\'s delivered on its ack', async () => {
  const keepAlive = setInterval(() => {}, 1000);
  const meshName = `mc-client-bridge-${process.pid}`;
  const alice = new MeshCoreDevice({ name: 'alice', mesh: meshcoreSimMesh(meshName) });
  const transport = await serveMeshCoreTcp(alice, { port: 0 });
  const m = /^tcp:\/\/([^:]+):(\d+)$/.exec(transport.device)!;
  const client = new TCPConnection(m[1], Number(m[2]));
  const heard: InboundFrame[] = [];
  const bridge = new MeshCoreBearer(
    bearerContext({
      interfaceId: 'ifc_mc_bridge', interfaceName: 'mc-bridge', settings: {}, clock: systemClock,
      log: createLogger({ level: 'error', format: 'json', write: () => {} }),
      events: { receive: (f) => void heard.push(f), state: () => {} },
    }),
    { openLink: (device) => openMeshCoreSimLink(device.slice('sim://'.length), { name: 'bridge' }) },
  );
  try {
    await bridge.start(`sim://${meshName}`);
    await waitFor('the bridge online', () => bridge.phase === 'online');
    const bridgeAddress = String(bridge.stats().address);
    await open(client);
    await client.getSelfInfo(3000);
    const contacts = await withTimeout(client.getContacts(), 'contacts');
    const gate = contacts.find((c) => c.advName === 'bridge');
    assert.ok(gate, 'the bridge\'s radio is a contact of the client\'s');
    assert.is(keyHex(gate.publicKey).slice(0, 12), bridgeAddress);

    // meshcore.js to the bridge.
    const confirmed = nextEvent(client, Constants.PushCodes.SendConfirmed, 'SEND_CONFIRMED');
    const sent = await withTimeout(client.sendTextMessage(gate.publicKey, 'to the bridge'), 'SENT');
    assert.is((await confirmed).ackCode, sent.expectedAckCrc);
    await waitFor('the bridge stores it', () => heard.length === 1);
    assert.is(heard[0].text, 'to the bridge');
    assert.is(heard[0].from, keyHex(alice.publicKey).slice(0, 12));

    // The bridge to meshcore.js: delivered only once the ack came.
    const waiting = receiveWithClient(client);
    const result = await bridge.send({
      deliveryId: 'dlv_client_1', messageId: 'msg_client_1', to: keyHex(alice.publicKey).slice(0, 12), channel: null, kind: 'text', text: 'from the bridge',
      payload: new TextEncoder().encode('from the bridge'),
    });
    assert.is(result.ok, true, JSON.stringify(result));
    const [got] = await waiting;
    assert.is(got.contactMessage.text, 'from the bridge');
    assert.is(keyHex(got.contactMessage.pubKeyPrefix), bridgeAddress);
  } finally {
    client.close();
    await bridge.stop();
    await transport.close();
    alice.close();
    clearInterval(keepAlive);
  }
});

test.run();
