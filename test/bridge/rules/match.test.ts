import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkSafeRegex,
  evaluateRules,
  referencesOf,
  RuleAction,
  RuleMatch,
  type AddressResolver,
  type EvaluableRule,
  type RoutableMessage,
} from '../../../src/bridge/rules/match.ts';
import { Schedule } from '../../../src/bridge/rules/schedule.ts';

const NOW = Date.parse('2026-01-05T10:00:00Z'); // Monday 11:00 in Berlin

const groups: Record<string, string[]> = {
  '@field-team': ['!a1b2c3d4', '!00ff00ff'],
  '@ops': ['+4917012345678'],
  '@empty': [],
};
const resolver: AddressResolver = { expand: (ref) => groups[ref] ?? null };

const msg = (over: Partial<RoutableMessage> = {}): RoutableMessage => ({
  direction: 'inbound',
  interface_id: 'ifc_mesh',
  interface_name: 'mesh-0',
  from: '!a1b2c3d4',
  to: '^all',
  channel: 0,
  kind: 'text',
  text: 'SOS need water at camp 3',
  ...over,
});

let nextPriority = 1;
const rule = (name: string, over: Partial<Omit<EvaluableRule, 'match'>> & { match?: unknown } = {}): EvaluableRule => ({
  id: `rul_${name}`,
  name,
  enabled: true,
  priority: nextPriority++,
  action: 'store',
  destinations: [],
  schedule: null,
  ...over,
  match: RuleMatch.parse(over.match ?? {}),
});
const decide = (rules: EvaluableRule[], m: RoutableMessage = msg(), defaultAction?: 'store' | 'drop') =>
  evaluateRules(rules, m, NOW, resolver, defaultAction);
const matches = (match: unknown, m: RoutableMessage = msg()) => decide([rule('r', { match })], m).rule_id === 'rul_r';
const matchIssues = (raw: unknown) => {
  const r = RuleMatch.safeParse(raw);
  if (r.success) throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  return r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
};

// ---- validation ----

test('a match with every filter validates; an empty match matches every message', () => {
  const full = {
    direction: 'inbound',
    interfaces: ['mesh-0', 'ifc_x'],
    from: ['@field-team', '!a1b2c3d4'],
    to: ['^all'],
    channel: [0, 7],
    kinds: ['text', 'position'],
    text: { contains: 'SOS', regex: '^[Ss][Oo][Ss]\\b' },
  };
  assert.equal(RuleMatch.parse(full), full);
  assert.ok(matches({}));
});

test('empty filter lists are refused, each saying how to match everything instead', () => {
  for (const field of ['interfaces', 'from', 'to', 'channel', 'kinds']) {
    const [issue] = matchIssues({ [field]: [] });
    assert.is(issue.path, field);
    assert.match(issue.message, new RegExp(`^${field} must list at least one`));
    assert.match(issue.message, new RegExp(`leave ${field} out`));
    assert.match(issue.message, /never means "everything" by accident/);
  }
});

test('bad filter values are refused naming the field, all at once', () => {
  const found = matchIssues({
    direction: 'sideways',
    channel: [256, 1.5, -1],
    kinds: ['sms'],
    from: [''],
    interfaces: 'mesh-0',
    colour: 'red',
  });
  const paths = found.map((i) => i.path);
  for (const p of ['direction', 'channel.0', 'channel.1', 'channel.2', 'kinds.0', 'from.0', 'interfaces']) assert.ok(paths.includes(p), p);
  assert.ok(found.some((i) => /colour/.test(i.message)));
  assert.match(found.find((i) => i.path === 'kinds.0')!.message, /kinds entries must be one of text, position, telemetry, data/);
});

test('a text filter needs contains or regex; a bad or dangerous regex is refused', () => {
  assert.match(matchIssues({ text: {} })[0].message, /text must give contains, regex or both/);
  const [bad] = matchIssues({ text: { regex: '[unclosed' } });
  assert.is(bad.path, 'text.regex');
  assert.match(bad.message, /text\.regex is not a valid regular expression/);
  const [nonLinear] = matchIssues({ text: { regex: '(sos)\\1' } });
  assert.is(nonLinear.path, 'text.regex');
  assert.match(nonLinear.message, /linear time/);
  // A ReDoS shape is accepted and cannot freeze the bridge: it runs on the linear engine.
  assert.is(checkSafeRegex('^(a|aa)+(b+)*$'), null);
  assert.match(matchIssues({ text: { regex: 'x'.repeat(201) } })[0].message, /at most 200 characters/);
  assert.is(checkSafeRegex('SOS|MAYDAY'), null);
});

test('forward needs destinations; drop and store refuse them', () => {
  const dest = [{ interface: 'sms-0', to: '+4917012345678' }];
  assert.ok(RuleAction.safeParse({ action: 'forward', destinations: dest }).success);
  for (const raw of [{ action: 'forward' }, { action: 'forward', destinations: [] }]) {
    const r = RuleAction.safeParse(raw);
    assert.ok(!r.success);
    if (!r.success) {
      assert.equal(r.error.issues[0].path, ['destinations']);
      assert.match(r.error.issues[0].message, /at least one \{interface, to\} when action is forward/);
    }
  }
  for (const action of ['drop', 'store']) {
    assert.ok(RuleAction.safeParse({ action }).success);
    assert.ok(RuleAction.safeParse({ action, destinations: [] }).success);
    const r = RuleAction.safeParse({ action, destinations: dest });
    assert.ok(!r.success);
    if (!r.success) assert.match(r.error.issues[0].message, new RegExp(`empty or left out when action is ${action}`));
  }
  const missing = RuleAction.safeParse({ action: 'forward', destinations: [{ interface: 'sms-0' }] });
  assert.ok(!missing.success && missing.error.issues[0].path.join('.') === 'destinations.0.to');
  const badAction = RuleAction.safeParse({ action: 'bounce' });
  assert.ok(!badAction.success && /action must be forward, drop or store/.test(badAction.error.issues[0].message));
});

test('referencesOf lists each @name once, from filters and destinations', () => {
  const match = RuleMatch.parse({ from: ['@field-team', '!abc'], to: ['@ops', '@field-team'] });
  assert.equal(referencesOf(match, [{ interface: 'sms-0', to: '@medic' }, { interface: 'sms-0', to: '+1' }]), ['@field-team', '@ops', '@medic']);
  assert.equal(referencesOf(RuleMatch.parse({})), []);
});

// ---- first match ----

test('the first enabled rule in priority order decides, whatever the array order', () => {
  const a = rule('a', { priority: 2, action: 'drop' });
  const b = rule('b', { priority: 1, action: 'store' });
  assert.is(decide([a, b]).rule_id, 'rul_b');
  assert.is(decide([a, { ...b, priority: 3 }]).rule_id, 'rul_a');
});

test('a disabled rule is skipped and, re-enabled, decides again at the same place', () => {
  const first = rule('first', { action: 'drop' });
  const second = rule('second', { action: 'store' });
  assert.is(decide([{ ...first, enabled: false }, second]).rule_id, 'rul_second');
  assert.equal(decide([first, second]), decide([{ ...first, enabled: true }, second]));
  assert.is(decide([first, second]).rule_id, 'rul_first');
});

test('no rule matching applies the default action, store unless told otherwise', () => {
  const r = rule('sms-only', { match: { kinds: ['data'] } });
  assert.equal(decide([r]), { rule_id: null, action: 'store', destinations: [], reason: 'no enabled rule matched; default action store' });
  assert.equal(decide([], msg(), 'drop'), { rule_id: null, action: 'drop', destinations: [], reason: 'no enabled rule matched; default action drop' });
});

// ---- filters ----

test('direction: inbound, outbound or any', () => {
  assert.ok(matches({ direction: 'inbound' }));
  assert.not.ok(matches({ direction: 'outbound' }));
  assert.ok(matches({ direction: 'any' }));
  assert.ok(matches({ direction: 'outbound' }, msg({ direction: 'outbound' })));
});

test('interfaces: by id or by name; a message from the API has no interface and does not match', () => {
  assert.ok(matches({ interfaces: ['ifc_mesh'] }));
  assert.ok(matches({ interfaces: ['sms-0', 'mesh-0'] }));
  assert.not.ok(matches({ interfaces: ['sms-0'] }));
  assert.not.ok(matches({ interfaces: ['mesh-0'] }, msg({ interface_id: null, interface_name: null, direction: 'outbound' })));
});

test('channel and kinds; a message without a channel does not match a channel filter', () => {
  assert.ok(matches({ channel: [0, 1] }));
  assert.not.ok(matches({ channel: [1] }));
  assert.not.ok(matches({ channel: [0] }, msg({ channel: null })));
  assert.ok(matches({ kinds: ['text'] }));
  assert.not.ok(matches({ kinds: ['position', 'telemetry'] }));
});

test('from and to: literal addresses ignore case; nothing else is normalised', () => {
  assert.ok(matches({ from: ['!A1B2C3D4'] }));
  assert.ok(matches({ from: ['!a1b2c3d4'] }, msg({ from: '!A1B2C3D4' })));
  assert.not.ok(matches({ from: ['!a1b2c3d'] }));
  assert.ok(matches({ to: ['^ALL'] }));
  assert.not.ok(matches({ to: ['+49 170 12345678'] }, msg({ to: '+4917012345678' })));
});

test('from and to: @group and @contact expand through the resolver; unknown names match nothing', () => {
  assert.ok(matches({ from: ['@field-team'] }));
  assert.ok(matches({ from: ['@field-team'] }, msg({ from: '!00FF00FF' })));
  assert.not.ok(matches({ from: ['@field-team'] }, msg({ from: '!deadbeef' })));
  assert.not.ok(matches({ from: ['@empty'] }));
  assert.not.ok(matches({ from: ['@no-such-group'] }));
  assert.ok(matches({ from: ['@no-such-group', '!a1b2c3d4'] }));
  assert.ok(matches({ to: ['@ops'] }, msg({ to: '+4917012345678' })));
  // A literal "@name" address is never compared as a string: "@ops" is always a reference.
  assert.not.ok(matches({ from: ['@ops'] }, msg({ from: '@ops' })));
});

test('each @name is expanded once per evaluation however many rules use it', () => {
  const calls: string[] = [];
  const counting: AddressResolver = { expand: (ref) => (calls.push(ref), groups[ref] ?? null) };
  const rules = [1, 2, 3].map((n) => rule(`r${n}`, { match: { from: ['@field-team'], text: { contains: 'not in the text' } } }));
  evaluateRules(rules, msg(), NOW, counting);
  assert.equal(calls, ['@field-team']);
});

test('text: contains ignores case, regex does not unless asked, both must match', () => {
  assert.ok(matches({ text: { contains: 'sos' } }));
  assert.not.ok(matches({ text: { contains: 'fire' } }));
  assert.ok(matches({ text: { regex: '^SOS\\b' } }));
  assert.not.ok(matches({ text: { regex: '^sos\\b' } }));
  assert.ok(matches({ text: { regex: '^[Ss][Oo][Ss]\\b' } }));
  assert.ok(matches({ text: { contains: 'WATER', regex: 'camp \\d' } }));
  assert.not.ok(matches({ text: { contains: 'WATER', regex: 'camp [4-9]' } }));
  assert.not.ok(matches({ text: { contains: 'sos' } }, msg({ text: null, kind: 'position' })));
});

test('every filter given must match', () => {
  const match = { direction: 'inbound', from: ['@field-team'], kinds: ['text'], text: { contains: 'SOS' } };
  assert.ok(matches(match));
  assert.not.ok(matches(match, msg({ direction: 'outbound' })));
  assert.not.ok(matches(match, msg({ from: '!12345678' })));
  assert.not.ok(matches(match, msg({ kind: 'data' })));
  assert.not.ok(matches(match, msg({ text: 'all good' })));
});

// ---- reasons and actions ----

test('the reason names the rule and each filter that matched', () => {
  const r = rule('sat-alerts', { match: { from: ['@field-team'], text: { contains: 'SOS' } } });
  assert.is(decide([r]).reason, "rule 'sat-alerts' matched: from in @field-team, text contains 'SOS'");
  const all = rule('all', {
    match: { direction: 'inbound', interfaces: ['mesh-0'], channel: [0], kinds: ['text'], from: ['!A1B2C3D4'], to: ['@everyone', '^all'], text: { regex: 'camp \\d' } },
  });
  assert.is(
    decide([all]).reason,
    "rule 'all' matched: direction inbound, interface mesh-0 (ifc_mesh), channel 0, kind text, from !A1B2C3D4, to ^all, text matches /camp \\d/",
  );
  assert.is(decide([rule('catch-all')]).reason, "rule 'catch-all' matched: no filters (every message)");
});

test('drop and store decide with no destinations', () => {
  assert.equal(decide([rule('quiet', { action: 'drop' })]), { rule_id: 'rul_quiet', action: 'drop', destinations: [], reason: "rule 'quiet' matched: no filters (every message)" });
  assert.is(decide([rule('keep', { action: 'store' })]).action, 'store');
});

test('forward returns the destinations as written, @names left for the caller', () => {
  const destinations = [{ interface: 'sms-0', to: '@ops' }, { interface: 'iridium-0', to: '300434060000000' }];
  const d = decide([rule('relay', { action: 'forward', destinations })]);
  assert.equal(d, { rule_id: 'rul_relay', action: 'forward', destinations, reason: "rule 'relay' matched: no filters (every message)" });
});

test('destinations on the source interface (by id or name) are removed and said so', () => {
  const destinations = [{ interface: 'mesh-0', to: '^all' }, { interface: 'sms-0', to: '+1' }, { interface: 'ifc_mesh', to: '!x' }];
  const d = decide([rule('echo', { action: 'forward', destinations })]);
  assert.equal(d.action, 'forward');
  assert.equal(d.destinations, [{ interface: 'sms-0', to: '+1' }]);
  assert.is(d.reason, "rule 'echo' matched: no filters (every message); removed mesh-0 (ifc_mesh) -> ^all, mesh-0 (ifc_mesh) -> !x: a rule may not forward back to the interface the message came from");
  // From the API (no interface) nothing is removed.
  assert.is(decide([rule('echo2', { action: 'forward', destinations })], msg({ interface_id: null, interface_name: null })).destinations.length, 3);
});

test('a forward left with no destination becomes store, with the reason', () => {
  const d = decide([rule('loop', { action: 'forward', destinations: [{ interface: 'mesh-0', to: '^all' }] })]);
  assert.equal(d, {
    rule_id: 'rul_loop',
    action: 'store',
    destinations: [],
    reason: "rule 'loop' matched: no filters (every message); removed mesh-0 (ifc_mesh) -> ^all: a rule may not forward back to the interface the message came from; no destination left, so the message is stored",
  });
});

// ---- schedules ----

test('a rule off its schedule is skipped; the next rule or the default decides and says why', () => {
  const nights = Schedule.parse({ timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '18:00', end: '08:00' }] });
  const days = Schedule.parse({ timezone: 'Europe/Berlin', windows: [{ days: ['mon'], start: '08:00', end: '18:00' }] });
  const night = rule('night-relay', { schedule: nights, action: 'drop' });
  const day = rule('day-relay', { schedule: days, action: 'store' });
  assert.is(decide([night, day]).rule_id, 'rul_day-relay');
  assert.is(evaluateRules([night, day], msg(), Date.parse('2026-01-05T20:00:00Z'), resolver).rule_id, 'rul_night-relay');
  assert.equal(decide([night]), {
    rule_id: null,
    action: 'store',
    destinations: [],
    reason: "no enabled rule matched; default action store (rule 'night-relay' matched but is off schedule: outside every window, now mon 11:00 Europe/Berlin)",
  });
});

test('a schedule is not consulted for a rule whose filters do not match', () => {
  const broken = {
    timezone: 'UTC',
    get windows(): never {
      throw new Error('schedule read');
    },
  } as unknown as Schedule;
  assert.throws(() => decide([rule('y', { schedule: broken })]), /schedule read/);
  const r = rule('x', { match: { kinds: ['data'] }, schedule: broken });
  assert.is(decide([r]).rule_id, null);
});

test.run();
