import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CreditLedger } from '../../../src/bearers/iridium/credits.ts';
import { FakeClock } from '../../../src/lib/clock.ts';
import { memoryState } from '../../helpers/bearer-context.ts';

// The credit ledger (docs/iridium.md, "Credits and budget"): what is spent survives a restart
// (a new ledger on the same driver state), days and months roll over at UTC midnight, a
// session is allowed only when its whole cost fits, and periodic mailbox checks may use only
// half of each budget.

const DAY = 86_400_000;

test('spent credits survive a restart; a new UTC day gives the day budget back, not the month', () => {
  const clock = new FakeClock(Date.parse('2026-03-30T10:00:00Z'));
  const state = memoryState();
  const a = new CreditLedger(clock, state, { perDay: 3, perMonth: 5 });
  assert.equal(a.allows(2), { ok: true });
  a.spend(2);
  const denied = a.allows(2);
  assert.not.ok(denied.ok);
  if (!denied.ok) {
    assert.is(denied.untilMs, Date.parse('2026-03-31T00:00:00Z'));
    assert.match(denied.reason, /today's budget of 3 credits has 1 left, 2 needed/);
  }
  const b = new CreditLedger(clock, state, { perDay: 3, perMonth: 5 }); // the bridge restarted
  assert.equal(b.view(), { credits_today: 2, credits_this_month: 2, credits_total: 2, credits_left_today: 1, credits_left_this_month: 3 });
  clock.advance(DAY);
  b.spend(2);
  const month = b.allows(2);
  assert.not.ok(month.ok, 'the month has 1 left');
  if (!month.ok) assert.is(month.untilMs, Date.parse('2026-04-01T00:00:00Z'));
  clock.advance(2 * DAY); // April: both budgets full again; the total stays
  assert.equal(b.view(), { credits_today: 0, credits_this_month: 0, credits_total: 4, credits_left_today: 3, credits_left_this_month: 5 });
});

test('periodic mailbox checks stop at half of each budget; sends may use the rest', () => {
  const clock = new FakeClock(Date.parse('2026-05-05T00:00:00Z'));
  const ledger = new CreditLedger(clock, memoryState(), { perDay: 4, perMonth: null });
  assert.ok(ledger.allows(1, 0.5).ok);
  ledger.spend(2);
  assert.not.ok(ledger.allows(1, 0.5).ok, 'half is spent');
  assert.ok(ledger.allows(2).ok, 'a send still fits');
});

test('everFits: a message dearer than a whole day or month can never go', () => {
  const ledger = new CreditLedger(new FakeClock(), memoryState(), { perDay: 3, perMonth: 100 });
  assert.ok(ledger.everFits(3));
  assert.not.ok(ledger.everFits(4));
  assert.ok(new CreditLedger(new FakeClock(), memoryState(), { perDay: null, perMonth: null }).everFits(7));
});

test('bad input: a damaged stored ledger reads as zero instead of throwing; a read-only ledger never writes', () => {
  const state = memoryState();
  for (const raw of ['not json', '[]', '{"dayUsed":"x","total":-5}', 'null']) {
    state.set('credits', raw);
    const ledger = new CreditLedger(new FakeClock(), state, { perDay: 3, perMonth: null });
    assert.is(ledger.view().credits_total, 0, raw);
  }
  const readOnly = new CreditLedger(new FakeClock(), { get: () => null }, { perDay: null, perMonth: null });
  readOnly.spend(3); // no set(): nothing is kept
  assert.is(readOnly.view().credits_total, 0);
});

test.run();
