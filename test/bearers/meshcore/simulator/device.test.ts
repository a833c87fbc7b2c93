import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { ERR_CODE, hex, OUT_PATH_UNKNOWN, type RadioMessage } from '../../../../src/bearers/meshcore/codec/index.ts';
import { ackCode, MeshCoreDevice, OFFLINE_QUEUE_SIZE } from '../../../../src/bearers/meshcore/simulator/device.ts';
import { MeshCoreMesh } from '../../../../src/bearers/meshcore/simulator/mesh.ts';
import { directHost, type TestHost } from './helpers.ts';

// The simulated companion radio against our own test host, with a fake clock: session start,
// errors with their codes, acks and lost acks, messages waiting while the host is away, the
// offline queue's limit, and faults (garbage, a command never answered, silence).
// docs/protocols/meshcore.md 6.3-6.6.

const T = 1_767_225_600; // 2026-01-01, the FakeClock's start

function world(options: { bobHost?: boolean } = {}) {
  const clock = new FakeClock();
  const mesh = new MeshCoreMesh({ clock, airDelayMs: 10, ackDelayMs: 20 });
  const alice = new MeshCoreDevice({ name: 'alice', mesh });
  const bob = new MeshCoreDevice({ name: 'bob', mesh });
  const a = directHost(alice);
  const b = options.bobHost === false ? null : directHost(bob);
  return { clock, mesh, alice, bob, a, b };
}

/** The only message of `type` heard since the last take (throws when absent). */
function only<T extends RadioMessage['type']>(host: TestHost, type: T): Extract<RadioMessage, { type: T }> {
  const got = host.take().filter((m) => m.type === type);
  assert.is(got.length, 1, `exactly one ${type}`);
  return got[0] as Extract<RadioMessage, { type: T }>;
}

const sendText = (host: TestHost, to: MeshCoreDevice, text: string, attempt = 0, timestamp = T) =>
  host.send({ type: 'SEND_TXT_MSG', txtType: 0, attempt, timestamp, pubKeyPrefix: to.publicKey.subarray(0, 6), text });

function drainNow(host: TestHost): RadioMessage[] {
  const got: RadioMessage[] = [];
  for (let i = 0; i < 40; i++) {
    host.send({ type: 'SYNC_NEXT_MESSAGE' });
    const m = host.take().find((x) => x.type !== 'MSG_WAITING')!;
    if (m.type === 'NO_MORE_MESSAGES') return got;
    got.push(m);
  }
  throw new Error('queue never emptied');
}

test('session start: SELF_INFO, DEVICE_INFO, time, contacts, channels, empty queue', () => {
  const { alice, bob, a } = world();
  a.send({ type: 'APP_START', appName: 'test' });
  const self = only(a, 'SELF_INFO');
  assert.is(self.name, 'alice');
  assert.is(hex(self.publicKey), hex(alice.publicKey));
  a.send({ type: 'DEVICE_QUERY', appTargetVersion: 3 });
  const info = only(a, 'DEVICE_INFO');
  assert.equal([info.firmwareVersion, info.maxContacts, info.maxChannels, info.model], [13, 100, 8, 'fieldbridge simulator']);
  assert.is(alice.appTargetVersion, 3);
  a.send({ type: 'SET_DEVICE_TIME', time: T + 60 });
  assert.equal(a.take(), [{ type: 'OK' }]);
  a.send({ type: 'GET_DEVICE_TIME' });
  assert.equal(a.take(), [{ type: 'CURR_TIME', time: T + 60 }]);
  a.send({ type: 'SET_DEVICE_TIME', time: T });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.ILLEGAL_ARG }], 'the clock never goes back');
  a.send({ type: 'GET_CONTACTS' });
  const contacts = a.take();
  assert.equal(contacts.map((m) => m.type), ['CONTACTS_START', 'CONTACT', 'END_OF_CONTACTS']);
  const c = contacts[1].type === 'CONTACT' ? contacts[1].contact : null;
  assert.is(c?.name, 'bob');
  assert.is(hex(c!.publicKey), hex(bob.publicKey));
  assert.is(c!.outPathLen, OUT_PATH_UNKNOWN);
  a.send({ type: 'GET_CONTACTS', since: c!.lastmod });
  assert.equal(a.take().map((m) => m.type), ['CONTACTS_START', 'END_OF_CONTACTS'], 'since filters on lastmod');
  a.send({ type: 'GET_CHANNEL', index: 0 });
  assert.is(only(a, 'CHANNEL_INFO').name, 'Public');
  a.send({ type: 'GET_CHANNEL', index: 8 });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.NOT_FOUND }]);
  a.send({ type: 'SYNC_NEXT_MESSAGE' });
  assert.equal(a.take(), [{ type: 'NO_MORE_MESSAGES' }]);
});

test('a direct text: SENT with the tag, MSG_WAITING and the message at the other end, SEND_CONFIRMED with that tag', () => {
  const { clock, alice, bob, a, b } = world();
  b!.send({ type: 'DEVICE_QUERY', appTargetVersion: 3 });
  b!.take();
  sendText(a, bob, 'hi bob');
  const sent = only(a, 'SENT');
  assert.ok(sent.flood);
  assert.is(sent.expectedAck, ackCode(T, 0, new TextEncoder().encode('hi bob'), alice.publicKey), 'the firmware\'s ack hash');
  clock.advance(10);
  assert.equal(b!.take(), [{ type: 'MSG_WAITING' }]);
  const [m] = drainNow(b!);
  assert.equal(m, { type: 'CONTACT_MSG_RECV_V3', snr: 6.25, pubKeyPrefix: alice.publicKey.slice(0, 6), pathLen: 0, txtType: 0, timestamp: T, text: 'hi bob' });
  clock.advance(20);
  const pushes = a.take();
  assert.equal(pushes.map((p) => p.type), ['PATH_UPDATED', 'SEND_CONFIRMED']);
  assert.equal(pushes[1], { type: 'SEND_CONFIRMED', ackCode: sent.expectedAck, roundTripMs: 30 });
  // With a path, the next one goes direct and arrives as such (path length FF).
  sendText(a, bob, 'again', 1);
  assert.not.ok(only(a, 'SENT').flood);
  clock.advance(30);
  const [again] = drainNow(b!);
  assert.is(again.type === 'CONTACT_MSG_RECV_V3' && again.pathLen, 0xff);
});

test('a lost ack leaves the text unconfirmed; the retry (attempt 1) has its own tag and is confirmed', () => {
  const { clock, bob, alice, a, b } = world();
  alice.loseAcks(1);
  sendText(a, bob, 'are you there');
  const first = only(a, 'SENT');
  clock.advance(first.suggestedTimeoutMs);
  assert.equal(a.take().filter((m) => m.type === 'SEND_CONFIRMED'), []);
  assert.is(alice.counters.acksLost, 1);
  // The text arrived anyway: the host on the other side sees it twice after the retry.
  sendText(a, bob, 'are you there', 1);
  const second = only(a, 'SENT');
  assert.ok(second.flood, 'the path came back with the lost ack, so it was lost too');
  assert.is.not(second.expectedAck, first.expectedAck);
  clock.advance(second.suggestedTimeoutMs);
  assert.equal(a.take().filter((m) => m.type === 'SEND_CONFIRMED'), [{ type: 'SEND_CONFIRMED', ackCode: second.expectedAck, roundTripMs: 30 }]);
  assert.equal(drainNow(b!).map((m) => m.type === 'CONTACT_MSG_RECV' && m.text), ['are you there', 'are you there']);
});

test('RESET_PATH floods again; unknown contacts are NOT_FOUND', () => {
  const { clock, bob, a } = world();
  sendText(a, bob, 'one');
  clock.advance(100);
  a.take();
  a.send({ type: 'RESET_PATH', publicKey: bob.publicKey });
  assert.equal(a.take(), [{ type: 'OK' }]);
  sendText(a, bob, 'two');
  assert.ok(only(a, 'SENT').flood);
  a.send({ type: 'RESET_PATH', publicKey: new Uint8Array(32) });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.NOT_FOUND }]);
  a.send({ type: 'SEND_TXT_MSG', txtType: 0, attempt: 0, timestamp: T, pubKeyPrefix: new Uint8Array(6), text: 'x' });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.NOT_FOUND }]);
});

test('texts: 160 bytes go, 161 are TABLE_FULL; signed text is UNSUPPORTED_CMD; an empty channel slot is NOT_FOUND', () => {
  const { bob, a } = world();
  sendText(a, bob, 'x'.repeat(160));
  assert.is(only(a, 'SENT').type, 'SENT');
  sendText(a, bob, 'x'.repeat(161));
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.TABLE_FULL }]);
  a.send({ type: 'SEND_TXT_MSG', txtType: 2, attempt: 0, timestamp: T, pubKeyPrefix: bob.publicKey.subarray(0, 6), text: 'x' });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD }]);
  a.send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 3, timestamp: T, text: 'x' });
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.NOT_FOUND }]);
});

test('channel text: OK at once, "<name>: text" on the other radio, in the plain format for a version 1 host', () => {
  const { clock, a, b } = world();
  b!.send({ type: 'DEVICE_QUERY', appTargetVersion: 1 });
  b!.take();
  a.send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: T, text: 'hello all' });
  assert.equal(a.take(), [{ type: 'OK' }]);
  clock.advance(10);
  assert.equal(drainNow(b!), [{ type: 'CHANNEL_MSG_RECV', channelIndex: 0, pathLen: 0, txtType: 0, timestamp: T, text: 'alice: hello all' }]);
  clock.advance(1000);
  assert.equal(a.take(), [], 'no ack exists for channel messages');
});

test('messages wait while the host is away and are all drained after it comes back, in order, with no second MSG_WAITING', () => {
  const { clock, bob, a } = world({ bobHost: false });
  for (const text of ['one', 'two', 'three']) {
    sendText(a, bob, text);
    clock.advance(50);
  }
  assert.equal(a.take().filter((m) => m.type === 'SEND_CONFIRMED').length, 3, 'acked by the radio, host or not');
  assert.is(bob.waiting, 3);
  const b = directHost(bob);
  assert.equal(b.take(), []);
  assert.equal(drainNow(b).map((m) => m.type === 'CONTACT_MSG_RECV' && m.text), ['one', 'two', 'three']);
  assert.is(bob.waiting, 0);
});

test('channel datagrams: OK, then CHANNEL_DATA_RECV with the bytes on the other radio; the firmware\'s checks in order', () => {
  const { clock, a, b } = world();
  const payload = Uint8Array.from({ length: 165 }, (_, i) => i);
  a.send({ type: 'SEND_CHANNEL_DATA', channelIndex: 0, pathLen: 0xff, path: new Uint8Array(0), dataType: 0xffff, payload });
  assert.equal(a.take(), [{ type: 'OK' }]);
  clock.advance(10);
  assert.equal(drainNow(b!), [{ type: 'CHANNEL_DATA_RECV', snr: 6.25, channelIndex: 0, pathLen: 0, dataType: 0xffff, payload }]);
  const send = (over: Record<string, unknown>) =>
    a.send({ type: 'SEND_CHANNEL_DATA', channelIndex: 0, pathLen: 0xff, path: new Uint8Array(0), dataType: 0xffff, payload: Uint8Array.of(1), ...over });
  send({ dataType: 0 });
  send({ channelIndex: 4 });
  send({ payload: new Uint8Array(166) });
  send({ payload: new Uint8Array(168) });
  send({ pathLen: 0xc1, path: new Uint8Array(4) });
  assert.equal(a.take().map((m) => m.type === 'ERR' && m.code), [ERR_CODE.ILLEGAL_ARG, ERR_CODE.NOT_FOUND, ERR_CODE.TABLE_FULL, ERR_CODE.ILLEGAL_ARG, ERR_CODE.ILLEGAL_ARG]);
});

test('a name longer than the firmware keeps is cut to 31 bytes', () => {
  const d = new MeshCoreDevice({ name: 'n'.repeat(40) });
  const h = directHost(d);
  h.send({ type: 'APP_START', appName: 'x' });
  assert.is(only(h, 'SELF_INFO').name, 'n'.repeat(31));
  d.close();
});

test('the offline queue holds 16: the oldest channel message makes room, else the new message is lost', () => {
  const { clock, bob, a } = world({ bobHost: false });
  a.send({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: T, text: 'channel' });
  for (let i = 0; i < OFFLINE_QUEUE_SIZE; i++) {
    sendText(a, bob, `dm ${i}`, 0, T + i);
    clock.advance(50);
  }
  assert.is(bob.waiting, OFFLINE_QUEUE_SIZE);
  sendText(a, bob, 'one too many', 0, T + 100);
  clock.advance(50);
  assert.is(bob.waiting, OFFLINE_QUEUE_SIZE);
  assert.is(bob.counters.queueDropped, 2);
  const texts = drainNow(directHost(bob)).map((m) => (m.type === 'CONTACT_MSG_RECV' ? m.text : m.type));
  assert.equal(texts, Array.from({ length: 16 }, (_, i) => `dm ${i}`));
});

test('faults: garbage is skipped by the host\'s decoder; a command never answered; silence; unknown commands', () => {
  const { alice, a } = world();
  alice.sendGarbage();
  assert.equal(a.take(), []);
  assert.ok(a.decoder.counts.skippedBytes > 40);
  assert.is(a.decoder.counts.oversize, 1);
  a.send({ type: 'SYNC_NEXT_MESSAGE' });
  assert.equal(a.take(), [{ type: 'NO_MORE_MESSAGES' }], 'the next frame comes through');

  alice.faults.neverAnswer = ['SYNC_NEXT_MESSAGE'];
  a.send({ type: 'SYNC_NEXT_MESSAGE' });
  assert.equal(a.take(), []);
  assert.is(alice.counters.unanswered, 1);
  alice.faults.neverAnswer = [];

  alice.faults.silent = true;
  a.send({ type: 'APP_START', appName: 'x' });
  assert.equal(a.take(), []);
  alice.faults.silent = false;

  a.send({ type: 'unknown', code: 0x63, body: Uint8Array.of(0x63) });
  a.writeRaw(Uint8Array.of(0x3c, 0x02, 0x00, 0x02, 0x00)); // SEND_TXT_MSG cut short
  assert.equal(a.take(), [{ type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD }, { type: 'ERR', code: ERR_CODE.UNSUPPORTED_CMD }]);
  assert.is(alice.counters.unknownCommands, 1);
  assert.is(alice.counters.malformed, 1);
});

test('commands arriving one byte at a time are answered the same', () => {
  const { alice, a } = world();
  const frame = Uint8Array.of(0x3c, 0x0d, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x74, 0x65, 0x73, 0x74, 0x32);
  for (const byte of frame) alice.fromHost(Uint8Array.of(byte));
  assert.is(only(a, 'SELF_INFO').name, 'alice');
});

test('adverts: a node joining later is heard; SEND_SELF_ADVERT pushes ADVERT to the others; manual-add mode pushes NEW_ADVERT', () => {
  const { clock, mesh, alice, a } = world();
  const carol = new MeshCoreDevice({ name: 'carol', mesh, manualAddContacts: true });
  const c = directHost(carol);
  assert.equal(a.take(), [{ type: 'ADVERT', publicKey: carol.publicKey }], 'auto-add mode: the joining node is added and pushed');
  assert.ok(alice.contact(carol.publicKey));
  assert.not.ok(carol.contact(alice.publicKey), 'manual-add mode keeps the contact out');
  a.send({ type: 'SEND_SELF_ADVERT', flood: true });
  assert.equal(a.take(), [{ type: 'OK' }]);
  clock.advance(10);
  const pushes = c.take();
  assert.equal(pushes.map((m) => m.type), ['NEW_ADVERT']);
  assert.is(pushes[0].type === 'NEW_ADVERT' && pushes[0].contact.name, 'alice');
});

test.run();
