import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../src/lib/clock.ts';
import { DailyBudget } from '../../../src/bearers/sms/budget.ts';
import { decodeDeliver, encodeDeliver, encodeStatusReport, decodeStatusReport, planMessage, type SmsDeliver } from '../../../src/bearers/sms/codec/index.ts';
import { cmsFailure } from '../../../src/bearers/sms/errors.ts';
import { Inbox } from '../../../src/bearers/sms/inbox.ts';
import { ReportBook } from '../../../src/bearers/sms/reports.ts';

// The SMS driver's pure parts: reassembly of long messages (inbox.ts), status reports
// (reports.ts), the day budget and +CMS ERROR classification.

const T0 = Date.parse('2026-03-02T12:00:00Z');

function delivers(text: string, from = '+4915112345678', reference = 7): SmsDeliver[] {
  const plan = planMessage(text, { reference, maxParts: 10 });
  if (!plan.ok) throw new Error(plan.error);
  return plan.plan.parts.map((part) => {
    const d = decodeDeliver(encodeDeliver(part, { originator: from, timestamp: new Date(T0) }).hex);
    if (!d.ok) throw new Error(d.error);
    return d.value;
  });
}

test('a single SMS is ready at once, as text with its sender, centre time and a dedupe key', () => {
  const inbox = new Inbox('ifc_test');
  const ready = inbox.add(3, delivers('hello')[0], T0)!;
  assert.equal(ready.indexes, [3]);
  assert.equal([ready.frame.from, ready.frame.kind, ready.frame.text], ['+4915112345678', 'text', 'hello']);
  assert.is(ready.frame.meta.smsc_timestamp, '2026-03-02T12:00:00.000Z');
  assert.match(ready.frame.dedupeKey ?? '', /^sms:ifc_test:\+4915112345678:2026-03-02T12:00:00.000Z:single:whole:[0-9a-f]{16}$/);
});

test('dedupe keys: the same SMS read again has the same key; another text in the same second, or another SIM, a different one', () => {
  const key = (inbox: Inbox, text: string, index: number) => inbox.add(index, delivers(text)[0], T0)!.frame.dedupeKey;
  const inbox = new Inbox('ifc_a');
  assert.is(key(inbox, 'pump 1 failed', 1), key(new Inbox('ifc_a'), 'pump 1 failed', 9), 'read again after a restart');
  assert.is.not(key(inbox, 'pump 1 failed', 2), key(inbox, 'pump 2 failed', 3), 'same sender, same second, other text');
  assert.is.not(key(new Inbox('ifc_a'), 'alert', 4), key(new Inbox('ifc_b'), 'alert', 4), 'the same alert on two SIMs');
});

test('parts wait for each other in any order; a part read twice counts once and both indexes are deleted', () => {
  const inbox = new Inbox('ifc_test');
  const long = 'ÄÖÜ emoji 😀 '.repeat(10);
  const parts = delivers(long);
  assert.is(parts.length, 2);
  assert.is(inbox.add(10, parts[1], T0), null);
  assert.is(inbox.add(11, parts[1], T0), null, 'a repeated part');
  assert.is(inbox.waiting, 1);
  const ready = inbox.add(12, parts[0], T0)!;
  assert.is(ready.frame.text, long, 'one message, identical to what was sent');
  assert.equal(ready.indexes.sort(), [10, 11, 12]);
  assert.is(ready.frame.meta.parts, 2);
  assert.is(inbox.waiting, 0);
  assert.ok(inbox.has(10) && inbox.has(12), 'taken until deleted');
  inbox.release(10);
  assert.not.ok(inbox.has(10));
});

test('parts still incomplete after the timeout are stored as they are, marked incomplete with what is missing', () => {
  const inbox = new Inbox('ifc_test');
  const parts = delivers('x'.repeat(400));
  assert.is(parts.length, 3);
  inbox.add(1, parts[0], T0);
  inbox.add(2, parts[2], T0);
  assert.equal(inbox.expired(T0 + 3_599_000, 3_600_000), []);
  const [late] = inbox.expired(T0 + 3_600_000, 3_600_000);
  assert.equal(late.frame.meta.missing_parts, [2]);
  assert.is(late.frame.meta.incomplete, true);
  assert.is(late.frame.text, 'x'.repeat(153) + 'x'.repeat(400 - 306));
  assert.equal(late.indexes, [1, 2]);
});

test('two senders using the same reference are two messages', () => {
  const inbox = new Inbox('ifc_test');
  const a = delivers('a'.repeat(200), '+111111111');
  const b = delivers('b'.repeat(200), '+222222222');
  inbox.add(1, a[0], T0);
  inbox.add(2, b[0], T0);
  assert.is(inbox.add(3, a[1], T0)!.frame.text, 'a'.repeat(200));
  assert.is(inbox.add(4, b[1], T0)!.frame.text, 'b'.repeat(200));
});

const report = (mr: number, st: number, recipient = '+4915112345678') => {
  const r = decodeStatusReport(encodeStatusReport({ messageReference: mr, recipient, timestamp: new Date(T0), discharge: new Date(T0 + 5000), status: st }).hex);
  if (!r.ok) throw new Error(r.error);
  return r.value;
};

test('reports: delivered when every part\'s report says so; a failed one fails it; pending waits; none in time is retryable', async () => {
  const clock = new FakeClock(T0);
  const book = new ReportBook(clock);
  const both = book.wait('+4915112345678', [5, 6], 60_000);
  assert.ok(book.settle(report(5, 0x00)));
  assert.ok(book.settle(report(6, 0x20)), 'still trying: consumed, waiting');
  assert.not.ok(book.settle(report(6, 0x00, '+4400000000')), 'another recipient with the same reference');
  assert.ok(book.settle(report(6, 0x00, '015112345678')), 'the centre may write the number nationally');
  assert.equal(await both, { ok: true });
  const failed = book.wait('+4915112345678', [9], 60_000);
  book.settle(report(9, 0x41));
  const f = await failed;
  assert.ok(!f.ok && !f.retryable && f.error.startsWith('ERR_SMS_REPORT_'), JSON.stringify(f));
  const silent = book.wait('+4915112345678', [10, 11], 60_000);
  book.settle(report(10, 0));
  clock.advance(60_000);
  assert.equal(await silent, { ok: false, retryable: true, error: 'ERR_SMS_NO_REPORT: 1 of 2 parts had no status report within 60 s' });
});

test('reports: a part\'s report that comes while the next part is still being sent is kept', async () => {
  const book = new ReportBook(new FakeClock(T0));
  const open = book.open('+4915112345678', 60_000);
  open.expect(1);
  assert.ok(book.settle(report(1, 0x00)), 'part 1 reported before part 2 went out');
  open.expect(2);
  book.settle(report(2, 0x00));
  assert.equal(await open.done(), { ok: true }, 'not delivered before every part is known');
  const stopped = book.open('+4915112345678', 60_000);
  stopped.expect(3);
  const waiting = stopped.done();
  book.acceptAll('accepted; stopped before the report');
  assert.equal(await waiting, { ok: true, meta: { delivered: 'accepted; stopped before the report' } });
});

test('the day budget: parts per UTC day, full again at midnight', () => {
  const clock = new FakeClock(Date.parse('2026-03-02T23:00:00Z'));
  const budget = new DailyBudget(clock, 5);
  assert.ok(budget.fits(5));
  budget.spend(4);
  assert.not.ok(budget.fits(2));
  assert.is(budget.left(), 1);
  assert.is(new Date(budget.nextDayMs()).toISOString(), '2026-03-03T00:00:00.000Z');
  clock.advance(3_600_000);
  assert.is(budget.left(), 5);
  assert.is(new DailyBudget(clock, null).left(), null);
});

test('+CMS ERROR codes: named, and retried only when a later attempt may help', () => {
  assert.equal(cmsFailure(331), { ok: false, retryable: true, error: 'ERR_SMS_NO_NETWORK_SERVICE: the modem answered +CMS ERROR: 331' });
  for (const code of [332, 41, 42, 314, 322]) assert.ok(cmsFailure(code).retryable, String(code));
  for (const code of [1, 8, 10, 304, 305]) assert.not.ok(cmsFailure(code).retryable, String(code));
  assert.match(cmsFailure(1).error, /ERR_SMS_UNASSIGNED_NUMBER/);
  assert.match(cmsFailure(200).error, /ERR_SMS_TP_FAILURE_C8/);
});

test.run();
