import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REPLY_CHAIN_GAP_MS, REPLY_CHAIN_LIMIT, ReplyGuard } from '../../../src/bridge/engine/reply-guard.ts';

// The loop guard of {from} answers (docs/routing.md, "Answering the sender"): a chain of
// answers to one sender on one interface stops after REPLY_CHAIN_LIMIT, stays stopped while the
// sender keeps talking, and opens again once the sender has been quiet for the gap.

const T0 = 1_000_000;

function answer(g: ReplyGuard, at: number, sender = '!0000beef', iface = 'ifc_a'): boolean {
  const refused = g.refusal(iface, sender, at);
  g.took(iface, sender, at, refused === null);
  return refused === null;
}

test('a chain of answers stops at the limit and stays stopped while the sender keeps talking', () => {
  const g = new ReplyGuard();
  const sent = Array.from({ length: 30 }, (_, i) => answer(g, T0 + i * 60_000));
  assert.is(sent.filter(Boolean).length, REPLY_CHAIN_LIMIT);
  assert.ok(sent.slice(0, REPLY_CHAIN_LIMIT).every(Boolean));
  assert.match(g.refusal('ifc_a', '!0000beef', T0 + 30 * 60_000) ?? '', /loop guard/);
});

test('after a quiet gap the sender is answered again; other senders and interfaces have their own chains', () => {
  const g = new ReplyGuard();
  for (let i = 0; i < REPLY_CHAIN_LIMIT + 2; i++) answer(g, T0 + i * 1000);
  const last = T0 + (REPLY_CHAIN_LIMIT + 1) * 1000;
  assert.not.ok(answer(g, last + REPLY_CHAIN_GAP_MS - 1), 'still within the gap of the last refused attempt');
  assert.ok(answer(g, last + 2 * REPLY_CHAIN_GAP_MS), 'a new chain after a quiet gap');
  assert.ok(answer(g, T0 + 5000, '!0000cafe'), 'another sender');
  assert.ok(answer(g, T0 + 5000, '!0000beef', 'ifc_b'), 'another interface');
  assert.ok(answer(g, T0 + 5000, '!0000CAFE'), 'addresses compare ignoring case: the same chain, still open');
});

test.run();
