import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../../src/bearers/rnode/driver.ts';
import { runSimCommand, SIM_COMMAND_OPTIONS } from '../../../../src/bearers/shared/simulators/cli.ts';
import { systemClock } from '../../../../src/lib/clock.ts';
import { openTestLink, recorder, waitFor } from '../helpers.ts';

const parse = (args: string[]) => {
  const { values, positionals } = parseArgs({ args, options: SIM_COMMAND_OPTIONS, allowPositionals: true, strict: true });
  return { values, positionals };
};

test('sim rnode --tcp twice: two radios on one channel, a bridge driver brings one up and talks to the other', async () => {
  const { values, positionals } = parse(['rnode', '--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--rssi=-80', '--snr=5.5']);
  const lines: string[] = [];
  const abort = new AbortController();
  let devices: string[] = [];
  const done = runSimCommand(values, positionals, { signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d) });
  await waitFor('listening', () => devices.length === 2);
  assert.ok(devices.every((d) => /^tcp:\/\/127\.0\.0\.1:\d+$/.test(d)), devices.join());
  const a = recorder({ preset: 'us-915' }, systemClock, 'a');
  const b = recorder({ preset: 'us-915' }, systemClock, 'b');
  const ba = new RNodeBearer(a.ctx, { openLink: openTestLink });
  const bb = new RNodeBearer(b.ctx, { openLink: openTestLink });
  await ba.start(devices[0]);
  await bb.start(devices[1]);
  await waitFor('online', () => ba.phase === 'online' && bb.phase === 'online');
  const payload = new TextEncoder().encode('hi');
  assert.equal(await ba.send({ deliveryId: 'd', messageId: 'm', to: 'broadcast', channel: null, kind: 'text', text: 'hi', payload }), { ok: true });
  await waitFor('received', () => b.received.length === 1);
  assert.equal(b.received[0].meta, { rssi_dbm: -80, snr_db: 5.5 });
  await ba.stop();
  await bb.stop();
  abort.abort();
  assert.is(await done, 0);
  assert.ok(lines.some((l) => /rnode1: radio on 915000000 Hz, 125000 Hz, SF7, CR4\/5, 22 dBm/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /rnode2: heard 2 bytes at -80 dBm, SNR 5.5 dB/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => l === 'rnode1: host left'));
});

test('bad arguments: exit 2 with the reason and the usage', async () => {
  const cases: [string[], RegExp][] = [
    [['nosuch', '--tcp', '127.0.0.1:1'], /unknown simulator "nosuch"/],
    [['rnode'], /at least one --tcp/],
    [['rnode', '--tcp', 'localhost'], /--tcp "localhost": expected HOST:PORT/],
    [['rnode', '--pty', 'rel/path'], /--pty "rel\/path": expected an absolute path/],
    [['rnode', '--tcp', '127.0.0.1:0', '--fw', '1'], /--fw "1": expected MAJOR.MINOR/],
    [['rnode', '--tcp', '127.0.0.1:0', '--wrong-echo', 'power'], /--wrong-echo "power": expected one of/],
    [['rnode', '--tcp', '127.0.0.1:0', '--rssi=-80'], /--rssi and --snr go together/],
    [['rnode', '--tcp', '127.0.0.1:0', '--max-tx-power', '99'], /--max-tx-power "99": expected a number from 0 to 37/],
  ];
  for (const [args, message] of cases) {
    const { values, positionals } = parse(args);
    const lines: string[] = [];
    assert.is(await runSimCommand(values, positionals, { write: (l) => lines.push(l) }), 2, args.join(' '));
    assert.match(lines.join('\n'), message);
    assert.match(lines.join('\n'), /fieldbridge sim rnode/);
  }
});

test('a port already taken: exit 1 naming the problem, nothing left listening', async () => {
  const first = new AbortController();
  let devices: string[] = [];
  const running = runSimCommand(...Object.values(parse(['rnode', '--tcp', '127.0.0.1:0'])) as [never, never], { signal: first.signal, write: () => {}, onReady: (d) => (devices = d) });
  await waitFor('listening', () => devices.length === 1);
  const lines: string[] = [];
  const { values, positionals } = parse(['rnode', '--tcp', devices[0].replace('tcp://', '')]);
  assert.is(await runSimCommand(values, positionals, { write: (l) => lines.push(l) }), 1);
  assert.match(lines.join('\n'), /EADDRINUSE/);
  first.abort();
  assert.is(await running, 0);
});

test.run();
