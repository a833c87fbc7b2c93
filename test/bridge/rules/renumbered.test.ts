import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type AddressResolver, evaluateRules, type EvaluableRule, type RoutableMessage, RuleMatch } from '../../../src/bridge/rules/match.ts';
import { blockedBecause, EMPTY_POLICY, matchEntry } from '../../../src/bridge/senders/policy.ts';

// Filters that name a renumbered node's former id, or its key, match the node at its new id
// (engine/node-identity.ts gives `current`; here a fixed table stands in for it). Without a
// `current`, or for addresses it gives back unchanged, addresses compare as written.

const KEY = Buffer.alloc(32, 7).toString('base64');
const moved: Record<string, string> = { '!0badcafe': '!7620f4a0', [KEY]: '!7620f4a0' };
const current = (a: string) => moved[a.trim().toLowerCase()] ?? moved[a.trim()] ?? a;
const groups: Record<string, string[]> = { '@field': ['!0badcafe'] };

const msg = (from: string): RoutableMessage => ({ direction: 'inbound', interface_id: 'ifc_mesh', interface_name: 'mesh', from, to: '^all', channel: 0, kind: 'text', text: 'hi' });
const rule = (match: unknown): EvaluableRule => ({ id: 'rul_r', name: 'r', enabled: true, priority: 1, action: 'drop', destinations: [], schedule: null, match: RuleMatch.parse(match) });
const hit = (match: unknown, from: string, resolver: AddressResolver) => evaluateRules([rule(match)], msg(from), 0, resolver).rule_id === 'rul_r';

test('rules: from naming the former id, a group holding it, or the key, match the node at its new id', () => {
  const withIdentity: AddressResolver = { expand: (r) => groups[r] ?? null, current };
  assert.ok(hit({ from: ['!0badcafe'] }, '!7620f4a0', withIdentity));
  assert.ok(hit({ from: ['@field'] }, '!7620f4a0', withIdentity));
  assert.ok(hit({ from: [KEY] }, '!7620f4a0', withIdentity));
  assert.not.ok(hit({ from: ['!0badcafe'] }, '!11111111', withIdentity));
  // Without the identity: as written.
  const plain: AddressResolver = { expand: (r) => groups[r] ?? null };
  assert.not.ok(hit({ from: ['!0badcafe'] }, '!7620f4a0', plain));
  assert.ok(hit({ from: ['!0BADCAFE'] }, '!0badcafe', plain), 'case ignored');
});

test('senders policy: an entry naming the former id (any spelling) or the key applies to the node at its new id, and says so', () => {
  const expand = (r: string) => groups[r] ?? null;
  assert.is(matchEntry(['!0badcafe'], '!7620f4a0', expand, current), '!0badcafe');
  assert.is(matchEntry(['@field'], '!7620f4a0', expand, current), '@field');
  assert.is(matchEntry([KEY], '!7620f4a0', expand, current), KEY);
  assert.is(matchEntry(['!0badcafe'], '!7620f4a0', expand), null, 'without the identity: as written');
  const policy = { ...EMPTY_POLICY, blocklist: ['!0badcafe'] };
  assert.is(blockedBecause(policy, '!7620f4a0', expand, current), 'sender !7620f4a0 is on the blocklist (as !0badcafe, the id it had before)');
  assert.is(blockedBecause({ ...EMPTY_POLICY, allowlist: ['!0badcafe'] }, '!7620f4a0', expand, current), null, 'the allowlist too');
  assert.is(blockedBecause({ ...EMPTY_POLICY, blocklist: ['!7620f4a0'] }, '!7620f4a0', expand, current), 'sender !7620f4a0 is on the blocklist');
});

test.run();
