import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SimValues } from '../../../../src/bearers/driver-module.ts';
import { meshcoreSimulator } from '../../../../src/bearers/meshcore/simulator/cli.ts';
import { MeshCoreDevice } from '../../../../src/bearers/meshcore/simulator/device.ts';
import { meshcoreSimMesh, openMeshCoreSimLink } from '../../../../src/bearers/meshcore/simulator/link.ts';
import { serveMeshCoreTcp } from '../../../../src/bearers/meshcore/simulator/serve.ts';
import { directHost, linkHost, nowSeconds, settle, tcpHost, waitFor } from './helpers.ts';

// The simulated companion radio over its carriers: sim://<channel> in process, TCP (one
// client at a time, dropLink), and `fieldbridge sim meshcore` run as its SimulatorCommand.
// The pty carrier is exercised by client.test.ts with meshcore.js.

test('sim://: two links on one channel are contacts and exchange a text with its ack', async () => {
  const one = await openMeshCoreSimLink('mc-lab', { name: 'north' });
  const two = await openMeshCoreSimLink('mc-lab', { name: 'south' });
  const a = linkHost(one);
  const b = linkHost(two);
  try {
    const contacts = await a.request({ type: 'GET_CONTACTS' }, 'END_OF_CONTACTS');
    assert.ok(contacts);
    assert.ok(one.device.contact(two.device.publicKey), 'north knows south');
    const sent = await a.request(
      { type: 'SEND_TXT_MSG', txtType: 0, attempt: 0, timestamp: nowSeconds(), pubKeyPrefix: two.device.publicKey.subarray(0, 6), text: 'over sim://' },
      'SENT', 'ERR',
    );
    assert.is(sent.type, 'SENT');
    assert.is((await a.next('SEND_CONFIRMED')).ackCode, sent.type === 'SENT' ? sent.expectedAck : -1);
    await b.next('MSG_WAITING');
    const [m] = await b.drain();
    assert.is(m.type === 'CONTACT_MSG_RECV' && m.text, 'over sim://');
  } finally {
    await a.close();
    await b.close();
  }
});

test('sim://: a closed link leaves the radio on the mesh; messages wait; the next open finds them', async () => {
  const first = await openMeshCoreSimLink('mc-wait', { name: 'gate' });
  const device = first.device;
  await first.close();
  const sender = new MeshCoreDevice({ name: 'sender', mesh: meshcoreSimMesh('mc-wait') });
  const s = directHost(sender);
  s.send({ type: 'SEND_TXT_MSG', txtType: 0, attempt: 0, timestamp: nowSeconds(), pubKeyPrefix: device.publicKey.subarray(0, 6), text: 'while away' });
  await waitFor('queued', () => device.waiting === 1);
  await waitFor('acked although the host is away', () => s.heard.some((m) => m.type === 'SEND_CONFIRMED'));
  const again = await openMeshCoreSimLink('mc-wait', { name: 'gate' });
  assert.is(again.device, device, 'the same radio');
  const h = linkHost(again);
  try {
    const [m] = await h.drain();
    assert.is(m.type === 'CONTACT_MSG_RECV' && m.text, 'while away');
    // A dropped link (the fault) closes the link from the radio's side.
    device.dropLink();
    await waitFor('closed', () => h.closed);
  } finally {
    await h.close();
    sender.close();
  }
});

test('TCP: one client at a time, a newcomer replaces the first; dropLink closes the client', async () => {
  const device = new MeshCoreDevice({ name: 'tcp-node' });
  const transport = await serveMeshCoreTcp(device, { port: 0 });
  try {
    const first = await tcpHost(transport.device);
    first.send({ type: 'APP_START', appName: 'one' });
    assert.is((await first.next('SELF_INFO')).name, 'tcp-node');
    const second = await tcpHost(transport.device);
    await waitFor('first closed', () => first.closed);
    second.send({ type: 'SYNC_NEXT_MESSAGE' });
    await second.next('NO_MORE_MESSAGES');
    device.sendGarbage();
    second.send({ type: 'GET_DEVICE_TIME' });
    await second.next('CURR_TIME');
    assert.ok(second.decoder.counts.skippedBytes > 0);
    device.dropLink();
    await waitFor('second closed', () => second.closed);
    await settle(20);
    assert.not.ok(device.hostAttached);
  } finally {
    await transport.close();
    device.close();
  }
});

const parse = (args: string[]): SimValues => parseArgs({ args, options: meshcoreSimulator.options, strict: true }).values as SimValues;

test('fieldbridge sim meshcore: two --tcp nodes know each other; --lose-acks loses the first ack', async () => {
  const lines: string[] = [];
  const abort = new AbortController();
  let devices: string[] = [];
  const done = meshcoreSimulator.run(parse(['--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--node-name', 'Field', '--lose-acks', '1', '--verbose']), {
    signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d),
  });
  await waitFor('listening', () => devices.length === 2);
  const a = await tcpHost(devices[0]);
  const b = await tcpHost(devices[1]);
  a.send({ type: 'APP_START', appName: 'cli' });
  b.send({ type: 'APP_START', appName: 'cli' });
  assert.is((await a.next('SELF_INFO')).name, 'Field 1');
  const bobKey = (await b.next('SELF_INFO')).publicKey;
  const text = (attempt: number) =>
    a.request({ type: 'SEND_TXT_MSG', txtType: 0, attempt, timestamp: nowSeconds(), pubKeyPrefix: bobKey.subarray(0, 6), text: 'cli' }, 'SENT');
  const first = await text(0);
  await b.next('MSG_WAITING');
  await settle(100);
  assert.not.ok(a.heard.some((m) => m.type === 'SEND_CONFIRMED'), 'the first ack is lost');
  const second = await text(1);
  assert.is((await a.next('SEND_CONFIRMED')).ackCode, second.expectedAck);
  assert.is.not(first.expectedAck, second.expectedAck);
  await a.close();
  await b.close();
  abort.abort();
  assert.is(await done, 0);
  const log = lines.join('\n');
  assert.match(log, /Field 1 [0-9a-f]{12}: listening on tcp:\/\/127\.0\.0\.1:\d+/);
  assert.match(log, /Field 1 [0-9a-f]{12}: host sent APP_START/);
  assert.match(log, /Field 1 [0-9a-f]{12}: sent "cli" to Field 2 \(flood, ack [0-9a-f]{8}\)/);
  assert.match(log, /Field 2 [0-9a-f]{12}: heard "cli" from Field 1/);
  assert.match(log, /Field 1 [0-9a-f]{12}: ack [0-9a-f]{8} confirmed/);
  assert.is(lines.at(-1), 'stopped');
});

test('fieldbridge sim meshcore: bad arguments exit 2 naming the option, with the usage', async () => {
  const cases: [string[], RegExp][] = [
    [[], /at least one --tcp/],
    [['--tcp', 'localhost'], /--tcp "localhost": expected HOST:PORT/],
    [['--pty', 'rel/path'], /--pty "rel\/path": expected an absolute path/],
    [['--tcp', '127.0.0.1:0', '--lose-acks', 'many'], /--lose-acks "many": expected a count/],
    [['--tcp', '127.0.0.1:0', '--node-name', ' '], /--node-name " ": expected 1 to 31 bytes/],
    [['--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--node-name', 'x'.repeat(30)], /--node-name "x+": expected 1 to 29 bytes/],
  ];
  for (const [args, message] of cases) {
    const lines: string[] = [];
    assert.is(await meshcoreSimulator.run(parse(args), { write: (l) => lines.push(l) }), 2, args.join(' '));
    assert.match(lines.join('\n'), message);
    assert.match(lines.join('\n'), /fieldbridge sim meshcore/);
  }
});

test.run();
