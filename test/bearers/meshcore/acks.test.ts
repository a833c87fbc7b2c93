import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AckBook } from '../../../src/bearers/meshcore/acks.ts';
import { FakeClock } from '../../../src/lib/clock.ts';

// Acks matched by the tag SENT announced (docs/protocols/meshcore.md 6.5), on a fake clock.

test('an ack settles its wait with the round trip; another tag does not', async () => {
  const clock = new FakeClock();
  const book = new AckBook(clock);
  const p = book.wait(0x12345678, 5000);
  book.confirm(0x12345679, 10);
  assert.is(book.size, 1);
  book.confirm(0x12345678, 321);
  assert.is(await p, 321);
  assert.is(book.size, 0);
  assert.is(book.unmatched, 1);
});

test('no ack in time: null at the deadline, not before', async () => {
  const clock = new FakeClock();
  const book = new AckBook(clock);
  let result: number | null | undefined;
  void book.wait(7, 3000).then((r) => (result = r));
  clock.advance(2999);
  await Promise.resolve();
  assert.is(result, undefined);
  clock.advance(1);
  await Promise.resolve();
  assert.is(result, null);
  book.confirm(7, 5); // too late: kept as unmatched, harmless
  assert.is(book.unmatched, 1);
});

test('an ack read before its SENT (same chunk) still settles the wait', async () => {
  const book = new AckBook(new FakeClock());
  book.confirm(42, 77);
  assert.is(await book.wait(42, 1000), 77);
});

test('giveUpAll ends every wait with null', async () => {
  const book = new AckBook(new FakeClock());
  const waits = [book.wait(1, 1000), book.wait(2, 1000)];
  book.giveUpAll();
  assert.equal(await Promise.all(waits), [null, null]);
});

test.run();
