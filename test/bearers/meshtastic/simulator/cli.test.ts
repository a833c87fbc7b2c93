import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SimValues } from '../../../../src/bearers/driver-module.ts';
import { meshtasticSimulator } from '../../../../src/bearers/meshtastic/simulator/cli.ts';
import { rnodeSimulator } from '../../../../src/bearers/rnode/simulator/cli.ts';
import { freshId, routingOf, tcpHost, textOf, textPacket, waitFor } from './helpers.ts';

// `fieldbridge sim meshtastic`, run through its SimulatorCommand as `fieldbridge sim` runs it
// (bearers/shared/simulators/cli.ts), with an abort signal instead of SIGINT.

const parse = (args: string[]): SimValues => parseArgs({ args, options: meshtasticSimulator.options, strict: true }).values as SimValues;

test('two --tcp nodes on one mesh: texts cross, --refuse-acks answers with the named error, --node-name names them', async () => {
  const values = parse(['--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--node-name', 'Field', '--refuse-acks', 'got_nak', '--verbose']);
  const lines: string[] = [];
  const abort = new AbortController();
  let devices: string[] = [];
  const done = meshtasticSimulator.run(values, { signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d) });
  await waitFor('listening', () => devices.length === 2);
  assert.ok(devices.every((d) => /^tcp:\/\/127\.0\.0\.1:\d+$/.test(d)), devices.join());
  const a = await tcpHost(devices[0]);
  const b = await tcpHost(devices[1]);
  const fa = await a.handshake();
  const fb = await b.handshake();
  const own = (frames: typeof fa) => frames.find((m) => m.node_info)!.node_info!;
  assert.equal([own(fa).user!.long_name, own(fb).user!.long_name], ['Field 1', 'Field 2']);
  const id = freshId();
  a.send(textPacket(own(fb).num!, 'from the command line', { id, wantAck: true }));
  await waitFor('text at b', () => b.packets().some((p) => textOf(p) === 'from the command line'));
  await waitFor('nak at a', () => a.packets().some((p) => routingOf(p) !== null));
  assert.equal(routingOf(a.packets().find((p) => routingOf(p))!), { error: 'GOT_NAK', request_id: id, from: own(fb).num!, to: own(fa).num! });
  await a.close();
  await b.close();
  abort.abort();
  assert.is(await done, 0);
  const log = lines.join('\n');
  assert.match(log, /meshtastic1 ![0-9a-f]{8}: listening on tcp:\/\/127\.0\.0\.1:\d+/);
  assert.match(log, /meshtastic1 ![0-9a-f]{8}: host sent want_config_id/);
  assert.match(log, /meshtastic1 ![0-9a-f]{8}: sent TEXT_MESSAGE_APP \(21 bytes\) to ![0-9a-f]{8}, id [0-9a-f]+, want_ack/);
  assert.match(log, /meshtastic2 ![0-9a-f]{8}: heard TEXT_MESSAGE_APP \(21 bytes\) .* at -80 dBm, SNR 6.25 dB/);
  assert.is(lines.at(-1), 'stopped');
});

test('bad arguments: exit 2 naming the option, with the usage', async () => {
  const cases: [string[], RegExp][] = [
    [[], /at least one --tcp/],
    [['--tcp', 'localhost'], /--tcp "localhost": expected HOST:PORT/],
    [['--tcp', '127.0.0.1:70000'], /--tcp "127.0.0.1:70000": expected HOST:PORT/],
    [['--pty', 'rel/path'], /--pty "rel\/path": expected an absolute path/],
    [['--tcp', '127.0.0.1:0', '--refuse-acks', 'LOST'], /--refuse-acks "LOST": expected a routing error, one of NO_ROUTE, GOT_NAK/],
    [['--tcp', '127.0.0.1:0', '--refuse-acks', 'NONE'], /--refuse-acks "NONE": expected a routing error/],
    [['--tcp', '127.0.0.1:0', '--node-name', ' '], /--node-name " ": expected 1 to 39 bytes/],
    [['--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--node-name', 'x'.repeat(38)], /--node-name "x+": expected 1 to 37 bytes/],
  ];
  for (const [args, message] of cases) {
    const lines: string[] = [];
    assert.is(await meshtasticSimulator.run(parse(args), { write: (l) => lines.push(l) }), 2, args.join(' '));
    assert.match(lines.join('\n'), message);
    assert.match(lines.join('\n'), /fieldbridge sim meshtastic/);
  }
});

test('a port already taken: exit 1 naming the problem, nothing left listening', async () => {
  const first = new AbortController();
  let devices: string[] = [];
  const running = meshtasticSimulator.run(parse(['--tcp', '127.0.0.1:0']), { signal: first.signal, write: () => {}, onReady: (d) => (devices = d) });
  await waitFor('listening', () => devices.length === 1);
  const lines: string[] = [];
  assert.is(await meshtasticSimulator.run(parse(['--tcp', devices[0].replace('tcp://', ''), '--tcp', '127.0.0.1:0']), { write: (l) => lines.push(l) }), 1);
  assert.match(lines.join('\n'), /EADDRINUSE/);
  first.abort();
  assert.is(await running, 0);
});

test('options shared with the RNode simulator are tcp, pty and verbose, defined alike; the rest do not collide', () => {
  const mine = meshtasticSimulator.options;
  const theirs = rnodeSimulator.options;
  const shared = Object.keys(mine).filter((k) => Object.hasOwn(theirs, k)).sort();
  assert.equal(shared, ['pty', 'tcp', 'verbose']);
  for (const k of shared) assert.equal(mine[k], theirs[k], k);
  assert.match(meshtasticSimulator.usage, /^fieldbridge sim meshtastic /);
});

test.run();
