import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCommand, FrameDecoder } from '../../../src/bearers/meshcore/codec/index.ts';
import { CommandChannel, CommandTimeout } from '../../../src/bearers/meshcore/commands.ts';
import { FakeClock } from '../../../src/lib/clock.ts';

// One command in flight, matched by the type of its answer (docs/protocols/meshcore.md 6.4),
// with a fake clock for the timeouts (docs/style.md habit 5).

function channel() {
  const clock = new FakeClock();
  const written: string[] = [];
  const decoder = new FrameDecoder('to-radio');
  const c = new CommandChannel(clock, async (bytes) => {
    for (const e of decoder.push(bytes)) if (e.type === 'frame') written.push(decodeCommand(e.body).type);
  }, 5000);
  return { clock, written, c };
}

const tick = () => new Promise((r) => setImmediate(r));

test('commands go one at a time: the second is written only after the first is answered', async () => {
  const { written, c } = channel();
  const first = c.run({ type: 'APP_START', appName: 'x' });
  const second = c.run({ type: 'SYNC_NEXT_MESSAGE' });
  await tick();
  assert.equal(written, ['APP_START']);
  c.answer({ type: 'MSG_WAITING' }); // the driver never passes pushes; a stray one does not end APP_START
  assert.equal(written, ['APP_START']);
  c.answer({ type: 'OK' });
  await tick();
  assert.equal(written, ['APP_START'], 'OK does not answer APP_START');
  c.answer({ type: 'ERR', code: 1 });
  assert.equal((await first).at(-1), { type: 'ERR', code: 1 }, 'ERR ends any command');
  await tick();
  assert.equal(written, ['APP_START', 'SYNC_NEXT_MESSAGE']);
  c.answer({ type: 'NO_MORE_MESSAGES' });
  assert.equal(await second, [{ type: 'NO_MORE_MESSAGES' }]);
});

test('GET_CONTACTS collects until END_OF_CONTACTS', async () => {
  const { c } = channel();
  const p = c.run({ type: 'GET_CONTACTS' });
  await tick();
  c.answer({ type: 'CONTACTS_START', count: 0 });
  c.answer({ type: 'END_OF_CONTACTS', mostRecentLastmod: 0 });
  assert.equal((await p).map((m) => m.type), ['CONTACTS_START', 'END_OF_CONTACTS']);
});

test('no answer within the timeout rejects with CommandTimeout; the next command still runs; a late answer is counted', async () => {
  const { clock, written, c } = channel();
  const p = c.run({ type: 'SYNC_NEXT_MESSAGE' });
  const next = c.run({ type: 'GET_DEVICE_TIME' });
  await tick();
  clock.advance(4999);
  clock.advance(1);
  const error = await p.catch((e: Error) => e);
  assert.instance(error, CommandTimeout);
  assert.match((error as Error).message, /did not answer SYNC_NEXT_MESSAGE within 5 s/);
  await tick();
  assert.equal(written, ['SYNC_NEXT_MESSAGE', 'GET_DEVICE_TIME']);
  c.answer({ type: 'CURR_TIME', time: 1 });
  assert.equal(await next, [{ type: 'CURR_TIME', time: 1 }]);
  c.answer({ type: 'NO_MORE_MESSAGES' });
  assert.is(c.unexpected, 1);
});

test('close() fails the command in flight and every later one', async () => {
  const { c } = channel();
  const p = c.run({ type: 'APP_START', appName: 'x' });
  await tick();
  c.close('the link closed');
  assert.match(String(await p.catch((e: Error) => e.message)), /the link closed/);
  assert.match(String(await c.run({ type: 'SYNC_NEXT_MESSAGE' }).catch((e: Error) => e.message)), /the link closed/);
});

test.run();
