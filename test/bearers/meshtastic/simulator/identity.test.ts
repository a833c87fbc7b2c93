import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32 } from 'node:zlib';
import { BROADCAST, decodeUser, formatNodeId, PORT_NUM } from '../../../../src/bearers/meshtastic/codec/messages.ts';
import { MeshtasticDevice } from '../../../../src/bearers/meshtastic/simulator/device.ts';
import { keysFromPrivate, keysFromSeed, nodeNumFromKey } from '../../../../src/bearers/meshtastic/simulator/identity.ts';
import { MeshtasticMesh } from '../../../../src/bearers/meshtastic/simulator/mesh.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { directHost, randomNonce } from './helpers.ts';

// Simulated node identities (simulator/identity.ts): X25519 keys, the firmware 2.8 node number
// (the CRC-32 of the public key), and the upgrade on demand that renumbers a node.

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

test('X25519: the public key of RFC 7748 section 6.1\'s Alice; the CRC-32 is the zlib one (check value of "123456789")', () => {
  const alice = keysFromPrivate(Buffer.from('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a', 'hex'));
  assert.is(hex(alice.publicKey), '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a');
  assert.is(crc32(Buffer.from('123456789')) >>> 0, 0xcbf43926);
  // CRC-32 of Alice's public key, computed bitwise here (polynomial 0xEDB88320, reflected,
  // initial and final 0xFFFFFFFF: ErriezCRC32 as the firmware uses it).
  let c = 0xffffffff;
  for (const byte of alice.publicKey) {
    c ^= byte;
    for (let i = 0; i < 8; i++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  assert.is(nodeNumFromKey(alice.publicKey), (~c) >>> 0);
});

test('keys from a seed are stable and differ by seed', () => {
  assert.is(hex(keysFromSeed('a').publicKey), hex(keysFromSeed('a').publicKey));
  assert.ok(hex(keysFromSeed('a').publicKey) !== hex(keysFromSeed('b').publicKey));
  assert.is(keysFromSeed('a').publicKey.length, 32);
});

test('numberFromKey: a 2.8 node is numbered by its key and tells its key in its User', () => {
  const device = new MeshtasticDevice({ name: 'k', numberFromKey: true });
  assert.is(device.num, nodeNumFromKey(device.keys.publicKey));
  assert.is(hex(device.owner.public_key!), hex(device.keys.publicKey));
  assert.is(device.owner.id, formatNodeId(device.num));
  device.close();
  // A 2.7-mode node is numbered from its name and shows no key unless given one.
  const old = new MeshtasticDevice({ name: 'k' });
  assert.ok(old.num !== device.num);
  assert.is(old.owner.public_key, undefined);
  old.close();
});

test('upgrade on demand: the device reboots under its key\'s number, keeps names and key; the host and the mesh learn it', () => {
  const clock = new FakeClock();
  const mesh = new MeshtasticMesh({ clock });
  const device = new MeshtasticDevice({ name: 'upgraded', mesh, clock, longName: 'Ridge relay', shortName: 'RDG' });
  const watcher = mesh.addRemoteNode({ num: 0x01020304 });
  const host = directHost(device);
  host.send({ want_config_id: randomNonce() });
  host.take();
  const before = device.num;
  const num = device.upgrade();
  assert.is(num, nodeNumFromKey(device.keys.publicKey));
  assert.ok(num !== before);
  assert.is(device.num, num);
  assert.ok(host.take().some((m) => m.rebooted), 'the host was told of the reboot');
  assert.ok(mesh.has(num) && !mesh.has(before), 'on the air under the new number only');
  const nonce = randomNonce();
  host.send({ want_config_id: nonce });
  const frames = host.take();
  assert.is(frames.find((m) => m.my_info)?.my_info?.my_node_num, num);
  const own = frames.find((m) => m.node_info?.num === num)!.node_info!;
  assert.equal([own.user?.id, own.user?.long_name, own.user?.short_name, hex(own.user!.public_key!)], [formatNodeId(num), 'Ridge relay', 'RDG', hex(device.keys.publicKey)]);
  clock.advance(0);
  const info = watcher.received.find((p) => p.decoded?.portnum === PORT_NUM.NODEINFO_APP);
  assert.ok(info, 'the node announced itself');
  assert.equal([info.from, info.to], [num, BROADCAST]);
  const user = decodeUser(info.decoded!.payload!);
  assert.ok(user.ok);
  assert.is(hex(user.value.public_key!), hex(device.keys.publicKey));
  assert.is(device.upgrade(), num, 'a second upgrade changes nothing');
  device.close();
});

test('a remote node upgrades the same way; one given no number is numbered by its key', () => {
  const clock = new FakeClock();
  const mesh = new MeshtasticMesh({ clock });
  const listener = mesh.addRemoteNode({ num: 0x0a0b0c0d });
  const field = mesh.addRemoteNode({ num: 0x0badcafe, seed: 'field', long_name: 'Field' });
  assert.is(hex(field.user.public_key!), hex(keysFromSeed('field').publicKey));
  const num = field.upgrade();
  assert.is(num, nodeNumFromKey(keysFromSeed('field').publicKey));
  assert.equal([field.num, field.user.id, field.user.long_name], [num, formatNodeId(num), 'Field']);
  assert.ok(mesh.has(num) && !mesh.has(0x0badcafe));
  clock.advance(0);
  assert.ok(listener.received.some((p) => p.from === num && p.decoded?.portnum === PORT_NUM.NODEINFO_APP));
  const fresh = mesh.addRemoteNode({ seed: 'fresh' });
  assert.is(fresh.num, nodeNumFromKey(keysFromSeed('fresh').publicKey));
});

test.run();
