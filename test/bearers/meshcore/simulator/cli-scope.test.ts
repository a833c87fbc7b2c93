import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { SimValues } from '../../../../src/bearers/driver-module.ts';
import { meshcoreSimulator } from '../../../../src/bearers/meshcore/simulator/cli.ts';
import { nowSeconds, settle, tcpHost, waitFor } from './helpers.ts';

// `fieldbridge sim meshcore --scoped-repeater REGION --flood-scope REGION` (docs/meshcore.md
// "Flood scopes"): the first node behind a repeater that forwards floods only in REGION and
// drops unscoped ones; every node with REGION as its default scope.

const parse = (args: string[]): SimValues => parseArgs({ args, options: meshcoreSimulator.options, strict: true }).values as SimValues;

test('fieldbridge sim meshcore --scoped-repeater: the scoped channel text passes, the unscoped one does not', async () => {
  const lines: string[] = [];
  const abort = new AbortController();
  let devices: string[] = [];
  const done = meshcoreSimulator.run(parse(['--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--scoped-repeater', 'de-by', '--flood-scope', '#de-by']), {
    signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d),
  });
  await waitFor('listening', () => devices.length === 2);
  const a = await tcpHost(devices[0]);
  try {
    assert.equal((await a.request({ type: 'GET_DEFAULT_FLOOD_SCOPE' }, 'DEFAULT_FLOOD_SCOPE')).scope?.name, 'de-by');
    await a.request({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: nowSeconds(), text: 'in de-by' }, 'OK');
    await a.request({ type: 'SET_FLOOD_SCOPE_KEY', variant: 1 }, 'OK');
    await a.request({ type: 'SEND_CHANNEL_TXT_MSG', txtType: 0, channelIndex: 0, timestamp: nowSeconds(), text: 'unscoped' }, 'OK');
    await settle(150);
  } finally {
    await a.close();
    abort.abort();
  }
  assert.is(await done, 0);
  const log = lines.join('\n');
  assert.match(log, /meshcore2 [0-9a-f]{12}: heard "meshcore1: in de-by" on channel 0/);
  assert.match(log, /meshcore1 [0-9a-f]{12}: sent "unscoped" on channel 0/);
  assert.not.match(log, /heard "meshcore1: unscoped"/);
});

test('fieldbridge sim meshcore: a bad region exits 2 naming the option', async () => {
  const lines: string[] = [];
  assert.is(await meshcoreSimulator.run(parse(['--tcp', '127.0.0.1:0', '--scoped-repeater', 'a b']), { write: (l) => lines.push(l) }), 2);
  assert.match(lines.join('\n'), /--scoped-repeater "a b": expected a region name/);
  assert.is(await meshcoreSimulator.run(parse(['--tcp', '127.0.0.1:0', '--flood-scope', '*']), { write: (l) => lines.push(l) }), 2);
  assert.match(lines.join('\n'), /--flood-scope "\*": expected a region name/);
});

test.run();
