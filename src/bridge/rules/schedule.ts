import { z } from 'zod';

// Rule schedules (docs/design.md section 6): a rule fires only inside one of its windows,
// read on the wall clock of an IANA timezone, and only between active_from and active_until.
//
// Decisions (docs/routing.md says the same for operators):
// - Windows are wall-clock times. A change to or from daylight saving time does not move
//   them: "09:00-17:00" is 09:00-17:00 local on both sides of the change.
// - A window whose end is earlier than its start crosses midnight and belongs to the day it
//   starts on: fri 22:00-06:00 covers Friday 22:00 to Saturday 06:00.
// - start === end means a whole day (24 hours) from start: sat 00:00-00:00 is all Saturday.
// - Start inclusive, end exclusive, to the minute: 09:00-17:00 is active at 16:59, not at 17:00.
// - A window starting inside the hour skipped in spring (02:30 on a night that jumps from
//   02:00 to 03:00) opens at the first wall-clock minute after the jump (03:00) and ends at
//   its normal end; a window lying wholly inside the skipped hour does not happen that night.
//   In the hour repeated in autumn, a window covering it is active both times round.

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
const MINUTES_PER_DAY = 1440;
const MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY;
const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** True when Intl knows the zone (the IANA database compiled into Node's ICU). */
export function isKnownTimezone(name: string): boolean {
  // Only names shaped like IANA ones ("UTC", "Europe/Berlin", "Etc/GMT+5"): Intl also takes
  // offsets such as "+01:00", which are not zones and know no daylight saving time.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

const Time = (field: 'start' | 'end') =>
  z.string({ error: `${field} must be a time "HH:MM"` }).regex(HHMM, { error: `${field} must be a 24-hour time "HH:MM" from 00:00 to 23:59` });

export const ScheduleWindow = z.strictObject({
  days: z
    .array(z.enum(WEEKDAYS, { error: `days must name weekdays: ${WEEKDAYS.join(', ')}` }), { error: 'days must be a list of weekdays' })
    .min(1, { error: 'days must name at least one weekday (an empty list would make the window never open)' }),
  start: Time('start').describe('Local time the window opens (inclusive)'),
  end: Time('end').describe('Local time the window closes (exclusive); earlier than start = crosses midnight; equal to start = 24 hours'),
});
export type ScheduleWindow = z.infer<typeof ScheduleWindow>;

// Said in words a curl user understands, not "expected object, received undefined".
const SCHEDULE_EXPECTED = (input: unknown) =>
  `schedule ${input === undefined ? 'is required: give' : 'must be'} an object {timezone, windows}, or null for always`;

export const Schedule = z
  .strictObject({
    timezone: z
      .string({ error: 'timezone must be an IANA timezone name such as "Europe/Berlin"' })
      .refine(isKnownTimezone, { error: (issue) => `timezone must be an IANA timezone name such as "Europe/Berlin" or "UTC", got ${JSON.stringify(issue.input)}` }),
    windows: z
      .array(ScheduleWindow, { error: 'windows must be a list of {days, start, end}' })
      .min(1, { error: 'windows must hold at least one window (for a rule active at all times, set schedule to null)' })
      .max(64, { error: 'windows may hold at most 64 windows' }),
    active_from: z.iso.datetime({ error: 'active_from must be an ISO 8601 UTC time such as 2026-05-01T00:00:00Z' }).nullable().optional(),
    active_until: z.iso.datetime({ error: 'active_until must be an ISO 8601 UTC time such as 2026-09-30T00:00:00Z' }).nullable().optional(),
  }, { error: (issue) => (issue.code === 'invalid_type' ? SCHEDULE_EXPECTED(issue.input) : undefined) })
  .superRefine((s, ctx) => {
    if (s.active_from && s.active_until && Date.parse(s.active_from) >= Date.parse(s.active_until)) {
      ctx.addIssue({ code: 'custom', path: ['active_until'], message: `active_until (${s.active_until}) must be later than active_from (${s.active_from})` });
    }
  })
  .describe('When the rule may fire: wall-clock windows in an IANA timezone, optionally bounded by active_from and active_until.');
export type Schedule = z.infer<typeof Schedule>;

/** A rule's schedule field: a schedule, or null for a rule that is always active. */
export const ScheduleOrNull = Schedule.nullable();

export interface ScheduleVerdict {
  active: boolean;
  reason: string;
}

export function isScheduleActive(schedule: Schedule, nowMs: number): ScheduleVerdict {
  if (schedule.active_from && nowMs < Date.parse(schedule.active_from)) {
    return { active: false, reason: `schedule not active before active_from ${schedule.active_from}` };
  }
  if (schedule.active_until && nowMs >= Date.parse(schedule.active_until)) {
    return { active: false, reason: `schedule ended at active_until ${schedule.active_until}` };
  }
  const local = localWeekMinute(schedule.timezone, nowMs);
  const now = `now ${describeWeekMinute(local)} ${schedule.timezone}`;
  for (let i = 0; i < schedule.windows.length; i++) {
    const w = schedule.windows[i];
    if (windowContains(w, local)) {
      return { active: true, reason: `inside window ${i + 1} (${w.days.join(',')} ${w.start}-${w.end}), ${now}` };
    }
  }
  return { active: false, reason: `outside every window, ${now}` };
}

function minutesOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

/** Does a window, opening on any of its days, cover this minute of the local week? */
function windowContains(w: ScheduleWindow, weekMinute: number): boolean {
  const start = minutesOf(w.start);
  const end = minutesOf(w.end);
  const length = end > start ? end - start : end - start + MINUTES_PER_DAY; // equal: 24 h
  for (const day of w.days) {
    const opens = WEEKDAYS.indexOf(day) * MINUTES_PER_DAY + start;
    // Sunday's late window reaches into Monday: count around the week.
    if ((weekMinute - opens + MINUTES_PER_WEEK) % MINUTES_PER_WEEK < length) return true;
  }
  return false;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(timezone, f);
  }
  return f;
}

const INTL_WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** Minutes since Monday 00:00 on the wall clock of the timezone at this instant. */
export function localWeekMinute(timezone: string, nowMs: number): number {
  let day = 0;
  let hour = 0;
  let minute = 0;
  for (const part of formatterFor(timezone).formatToParts(nowMs)) {
    if (part.type === 'weekday') day = INTL_WEEKDAYS.indexOf(part.value);
    else if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return day * MINUTES_PER_DAY + hour * 60 + minute;
}

function describeWeekMinute(weekMinute: number): string {
  const day = WEEKDAYS[Math.floor(weekMinute / MINUTES_PER_DAY)];
  const m = weekMinute % MINUTES_PER_DAY;
  return `${day} ${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}
