import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evaluateRules, type EvaluableRule, type RoutableMessage, type RuleTraceEntry } from '../../../src/bridge/rules/match.ts';

// The rule trace a preview shows (issue 17, docs/routing.md 8): one entry per rule in order,
// the first failing filter and why, the schedule's verdict, and a decision identical to the one
// made without a trace.

const NOW = Date.parse('2026-11-29T03:00:00Z'); // Sunday 03:00 UTC
const msg: RoutableMessage = { direction: 'outbound', interface_id: null, interface_name: null, from: 'local', to: '!a1', channel: null, kind: 'text', text: 'daily report' };
const rule = (over: Partial<EvaluableRule> & { name: string }): EvaluableRule => ({ id: `rul_${over.name}`, enabled: true, priority: 0, match: {}, schedule: null, action: 'store', destinations: [], ...over });
const resolve = { expand: () => null };

test('every rule is traced in order; the decision is the same with and without a trace', () => {
  const rules = [
    rule({ name: 'off', priority: 1, enabled: false }),
    rule({ name: 'inbound-only', priority: 2, match: { direction: 'inbound' } }),
    rule({ name: 'radio', priority: 3, match: { interfaces: ['mesh-0'] } }),
    rule({ name: 'channel', priority: 4, match: { channel: [1] } }),
    rule({ name: 'sos', priority: 5, match: { text: { contains: 'SOS' } } }),
    rule({ name: 'office', priority: 6, match: { text: { regex: 'report' } }, schedule: { timezone: 'UTC', windows: [{ days: ['mon'], start: '09:00', end: '17:00' }] }, action: 'drop' }),
    rule({ name: 'keep', priority: 7 }),
    rule({ name: 'after', priority: 8, match: { from: ['!zz'] } }),
  ];
  const trace: RuleTraceEntry[] = [];
  const traced = evaluateRules(rules, msg, NOW, resolve, 'store', trace);
  assert.equal(traced, evaluateRules(rules, msg, NOW, resolve, 'store'));
  assert.is(traced.rule_id, 'rul_keep');
  assert.equal(trace.map((e) => [e.name, e.outcome]), [
    ['off', 'disabled'], ['inbound-only', 'no_match'], ['radio', 'no_match'], ['channel', 'no_match'], ['sos', 'no_match'], ['office', 'off_schedule'], ['keep', 'decided'], ['after', 'not_reached'],
  ]);
  assert.equal(trace.map((e) => e.filters.failed?.reason ?? null), [
    null,
    'the message is outbound, the rule wants inbound',
    'the message was sent through the API, so it arrived on no interface',
    'the message has no channel',
    "the text does not contain 'SOS'",
    null,
    null,
    'from local is not one of !zz',
  ]);
  assert.equal(trace[5].filters.matched_filters, ['text matches /report/']);
  assert.equal(trace[5].schedule, { active: false, reason: 'outside every window, now sun 03:00 UTC' });
  assert.is(trace[6].schedule, null);
});

test('a disabled rule that would match says so; no rule deciding gives the default with the off-schedule note', () => {
  const rules = [rule({ name: 'off', priority: 1, enabled: false }), rule({ name: 'night', priority: 2, schedule: { timezone: 'UTC', windows: [{ days: ['sat'], start: '22:00', end: '02:00' }] } })];
  const trace: RuleTraceEntry[] = [];
  const d = evaluateRules(rules, msg, NOW, resolve, 'drop', trace);
  assert.is(d.rule_id, null);
  assert.match(d.reason, /^no enabled rule matched; default action drop \(rule 'night' matched but is off schedule/);
  assert.equal(trace.map((e) => [e.outcome, e.filters.matched]), [['disabled', true], ['off_schedule', true]]);
});

test.run();
