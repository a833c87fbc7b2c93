import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKnownTimezone, isScheduleActive, localWeekMinute, Schedule } from '../../../src/bridge/rules/schedule.ts';

const at = (iso: string) => Date.parse(iso);
const schedule = (over: Record<string, unknown>) => Schedule.parse({ timezone: 'Europe/Berlin', windows: [], ...over });
const active = (s: Schedule, iso: string) => isScheduleActive(s, at(iso)).active;
const issues = (raw: unknown) => {
  const r = Schedule.safeParse(raw);
  if (r.success) throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  return r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
};
const window = (days: string[], start: string, end: string) => ({ days, start, end });
const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri'];
const everyDay = [...weekdays, 'sat', 'sun'];

// ---- validation ----

test('a full schedule validates', () => {
  const raw = {
    timezone: 'America/New_York',
    windows: [window(['mon', 'fri'], '09:00', '17:30'), window(['sat'], '22:00', '06:00')],
    active_from: '2026-05-01T00:00:00Z',
    active_until: '2026-09-30T00:00:00.000Z',
  };
  assert.equal(Schedule.parse(raw), raw);
  assert.ok(Schedule.safeParse({ timezone: 'UTC', windows: [window(['sun'], '00:00', '00:00')] }).success);
  assert.ok(Schedule.safeParse({ timezone: 'UTC', windows: [window(['sun'], '00:00', '23:59')], active_from: null, active_until: null }).success);
});

test('a timezone must be an IANA name Intl knows', () => {
  for (const bad of ['Mars/Olympus_Mons', 'Europe/Berln', '+01:00', 'CET; drop table', '', 'Europe/Berlin/']) {
    const [issue] = issues({ timezone: bad, windows: [window(['mon'], '09:00', '17:00')] });
    assert.is(issue.path, 'timezone', bad);
    assert.match(issue.message, /IANA timezone name/);
    assert.ok(issue.message.endsWith(`got ${JSON.stringify(bad)}`), issue.message);
  }
  assert.is(issues({ timezone: 42, windows: [window(['mon'], '09:00', '17:00')] })[0].path, 'timezone');
  for (const ok of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'Asia/Kolkata']) assert.ok(isKnownTimezone(ok), ok);
});

test('windows, days and times are checked field by field, all at once', () => {
  const found = issues({
    timezone: 'UTC',
    windows: [window([], '09:00', '17:00'), window(['monday'], '9:00', '24:00'), { days: ['mon'], start: '12:60', end: '13:00', extra: 1 }],
  });
  const paths = found.map((i) => i.path);
  assert.ok(paths.includes('windows.0.days'));
  assert.ok(paths.includes('windows.1.days.0'));
  assert.ok(paths.includes('windows.1.start'));
  assert.ok(paths.includes('windows.1.end'));
  assert.ok(paths.includes('windows.2.start'));
  assert.ok(found.some((i) => i.path === 'windows.2' && /extra/.test(i.message)));
  assert.match(found.find((i) => i.path === 'windows.0.days')!.message, /at least one weekday/);
  assert.match(found.find((i) => i.path === 'windows.1.end')!.message, /end must be a 24-hour time "HH:MM"/);
  assert.match(issues({ timezone: 'UTC', windows: [] })[0].message, /at least one window .*schedule to null/);
  assert.is(issues({ timezone: 'UTC' })[0].path, 'windows');
});

test('active_from must come before active_until; both must be ISO UTC times', () => {
  const w = [window(['mon'], '09:00', '17:00')];
  const [order] = issues({ timezone: 'UTC', windows: w, active_from: '2026-06-01T00:00:00Z', active_until: '2026-06-01T00:00:00Z' });
  assert.is(order.path, 'active_until');
  assert.match(order.message, /must be later than active_from/);
  const [format] = issues({ timezone: 'UTC', windows: w, active_from: '1 June 2026' });
  assert.is(format.path, 'active_from');
  assert.match(format.message, /ISO 8601/);
});

// ---- windows ----

test('a window is active from start (inclusive) to end (exclusive) on its days, local time', () => {
  // January: Berlin is UTC+1. Monday 2026-01-05.
  const s = schedule({ windows: [window(weekdays, '09:00', '17:00')] });
  assert.not.ok(active(s, '2026-01-05T07:59:00Z')); // 08:59
  assert.ok(active(s, '2026-01-05T08:00:00Z')); // 09:00
  assert.ok(active(s, '2026-01-05T15:59:59Z')); // 16:59
  assert.not.ok(active(s, '2026-01-05T16:00:00Z')); // 17:00
  assert.not.ok(active(s, '2026-01-03T10:00:00Z')); // Saturday 11:00
});

test('the verdict says which window and what local time', () => {
  const s = schedule({ windows: [window(['sat'], '10:00', '11:00'), window(weekdays, '09:00', '17:00')] });
  assert.equal(isScheduleActive(s, at('2026-01-05T08:30:00Z')), {
    active: true,
    reason: 'inside window 2 (mon,tue,wed,thu,fri 09:00-17:00), now mon 09:30 Europe/Berlin',
  });
  assert.equal(isScheduleActive(s, at('2026-01-04T11:00:00Z')), { active: false, reason: 'outside every window, now sun 12:00 Europe/Berlin' });
});

test('a window ending before it starts crosses midnight and belongs to its start day', () => {
  // Fri 2026-01-02 and Sat 2026-01-03, UTC+1.
  const s = schedule({ windows: [window(['fri'], '22:00', '06:00')] });
  assert.not.ok(active(s, '2026-01-02T20:59:00Z')); // Fri 21:59
  assert.ok(active(s, '2026-01-02T21:00:00Z')); // Fri 22:00
  assert.ok(active(s, '2026-01-03T02:00:00Z')); // Sat 03:00
  assert.not.ok(active(s, '2026-01-03T05:00:00Z')); // Sat 06:00
  assert.not.ok(active(s, '2026-01-03T22:00:00Z')); // Sat 23:00: Saturday is not a start day
  assert.not.ok(active(s, '2026-01-01T02:00:00Z')); // Thu 03:00: Thursday night is not Friday's
});

test('a Sunday night window reaches into Monday across the end of the week', () => {
  const s = schedule({ timezone: 'UTC', windows: [window(['sun'], '23:00', '01:00')] });
  assert.ok(active(s, '2026-01-04T23:30:00Z')); // Sun
  assert.ok(active(s, '2026-01-05T00:59:00Z')); // Mon
  assert.not.ok(active(s, '2026-01-05T01:00:00Z'));
  assert.not.ok(active(s, '2026-01-05T23:30:00Z')); // Monday night
});

test('start equal to end is a whole day from start', () => {
  const allSaturday = schedule({ timezone: 'UTC', windows: [window(['sat'], '00:00', '00:00')] });
  assert.ok(active(allSaturday, '2026-01-03T00:00:00Z'));
  assert.ok(active(allSaturday, '2026-01-03T23:59:00Z'));
  assert.not.ok(active(allSaturday, '2026-01-04T00:00:00Z'));
  assert.not.ok(active(allSaturday, '2026-01-02T23:59:00Z'));
  const noonToNoon = schedule({ timezone: 'UTC', windows: [window(['sat'], '12:00', '12:00')] });
  assert.ok(active(noonToNoon, '2026-01-04T11:59:00Z'));
  assert.not.ok(active(noonToNoon, '2026-01-04T12:00:00Z'));
});

// ---- daylight saving time ----

test('Europe/Berlin: a 09:00-17:00 window stays 09:00-17:00 local across the spring change', () => {
  const s = schedule({ windows: [window(everyDay, '09:00', '17:00')] });
  // Sat 2026-03-28, CET (UTC+1).
  assert.not.ok(active(s, '2026-03-28T07:59:00Z'));
  assert.ok(active(s, '2026-03-28T08:00:00Z'));
  assert.not.ok(active(s, '2026-03-28T16:00:00Z'));
  // Mon 2026-03-30, CEST (UTC+2): the same wall clock is an hour earlier in UTC.
  assert.not.ok(active(s, '2026-03-30T06:59:00Z'));
  assert.ok(active(s, '2026-03-30T07:00:00Z'));
  assert.ok(active(s, '2026-03-30T14:59:00Z'));
  assert.not.ok(active(s, '2026-03-30T15:00:00Z'));
});

test('Europe/Berlin: the same across the autumn change', () => {
  const s = schedule({ windows: [window(everyDay, '09:00', '17:00')] });
  // Sat 2026-10-24 CEST, Mon 2026-10-26 CET.
  assert.ok(active(s, '2026-10-24T07:00:00Z'));
  assert.not.ok(active(s, '2026-10-24T15:00:00Z'));
  assert.not.ok(active(s, '2026-10-26T07:00:00Z'));
  assert.ok(active(s, '2026-10-26T08:00:00Z'));
  assert.ok(active(s, '2026-10-26T15:59:00Z'));
  assert.not.ok(active(s, '2026-10-26T16:00:00Z'));
});

test('America/New_York: the same across both changes', () => {
  const s = schedule({ timezone: 'America/New_York', windows: [window(everyDay, '09:00', '17:00')] });
  // Sat 2026-03-07 EST (UTC-5), Mon 2026-03-09 EDT (UTC-4).
  assert.ok(active(s, '2026-03-07T14:00:00Z'));
  assert.not.ok(active(s, '2026-03-07T13:59:00Z'));
  assert.ok(active(s, '2026-03-09T13:00:00Z'));
  assert.not.ok(active(s, '2026-03-09T12:59:00Z'));
  assert.not.ok(active(s, '2026-03-09T21:00:00Z'));
  // Sat 2026-10-31 EDT, Mon 2026-11-02 EST.
  assert.ok(active(s, '2026-10-31T13:00:00Z'));
  assert.not.ok(active(s, '2026-11-02T13:00:00Z'));
  assert.ok(active(s, '2026-11-02T14:00:00Z'));
  assert.ok(active(s, '2026-11-02T21:59:00Z'));
  assert.not.ok(active(s, '2026-11-02T22:00:00Z'));
});

test('a window starting in the skipped spring hour opens at the first minute after the jump', () => {
  // Berlin, Sun 2026-03-29: 01:59 CET (00:59Z) is followed by 03:00 CEST (01:00Z).
  const s = schedule({ windows: [window(['sun'], '02:30', '04:00')] });
  assert.not.ok(active(s, '2026-03-29T00:59:00Z'));
  assert.ok(active(s, '2026-03-29T01:00:00Z'));
  assert.ok(active(s, '2026-03-29T01:59:00Z')); // 03:59
  assert.not.ok(active(s, '2026-03-29T02:00:00Z')); // 04:00
  // New York, Sun 2026-03-08: 01:59 EST (06:59Z) is followed by 03:00 EDT (07:00Z).
  const ny = schedule({ timezone: 'America/New_York', windows: [window(['sun'], '02:30', '04:00')] });
  assert.not.ok(active(ny, '2026-03-08T06:59:00Z'));
  assert.ok(active(ny, '2026-03-08T07:00:00Z'));
});

test('a window wholly inside the skipped hour does not happen that night', () => {
  const s = schedule({ windows: [window(['sun'], '02:15', '02:45')] });
  for (let t = at('2026-03-28T22:00:00Z'); t < at('2026-03-29T06:00:00Z'); t += 60_000) {
    assert.not.ok(isScheduleActive(s, t).active, new Date(t).toISOString());
  }
  // A week later the hour exists again: 02:15 CEST is 00:15Z.
  assert.ok(active(s, '2026-04-05T00:15:00Z'));
});

test('in the repeated autumn hour a window covering it is active both times round', () => {
  // Berlin, Sun 2026-10-25: 02:00-03:00 local runs at 00:00-01:00Z (CEST) and 01:00-02:00Z (CET).
  const s = schedule({ windows: [window(['sun'], '02:15', '02:45')] });
  assert.ok(active(s, '2026-10-25T00:30:00Z'));
  assert.not.ok(active(s, '2026-10-25T00:50:00Z'));
  assert.ok(active(s, '2026-10-25T01:30:00Z'));
  assert.not.ok(active(s, '2026-10-25T02:30:00Z'));
});

test('localWeekMinute counts from Monday 00:00 local', () => {
  assert.is(localWeekMinute('UTC', at('2026-01-05T00:00:00Z')), 0);
  assert.is(localWeekMinute('UTC', at('2026-01-04T23:59:00Z')), 7 * 1440 - 1);
  assert.is(localWeekMinute('Asia/Kolkata', at('2026-01-05T00:00:00Z')), 5 * 60 + 30);
});

// ---- active_from / active_until ----

test('active_from and active_until bound the schedule, with the reason', () => {
  const s = schedule({ timezone: 'UTC', windows: [window(everyDay, '00:00', '00:00')], active_from: '2026-05-01T00:00:00Z', active_until: '2026-06-01T00:00:00Z' });
  assert.equal(isScheduleActive(s, at('2026-04-30T23:59:59Z')), { active: false, reason: 'schedule not active before active_from 2026-05-01T00:00:00Z' });
  assert.ok(active(s, '2026-05-01T00:00:00Z'));
  assert.ok(active(s, '2026-05-31T23:59:59Z'));
  assert.equal(isScheduleActive(s, at('2026-06-01T00:00:00Z')), { active: false, reason: 'schedule ended at active_until 2026-06-01T00:00:00Z' });
  const openEnded = schedule({ timezone: 'UTC', windows: [window(everyDay, '00:00', '00:00')], active_from: '2026-05-01T00:00:00Z' });
  assert.ok(active(openEnded, '2030-01-01T00:00:00Z'));
});

test.run();
