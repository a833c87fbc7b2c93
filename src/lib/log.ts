// One line per event. Three formats (docs/design.md section 4):
//  - journald (JOURNAL_STREAM set): "<N>event key=value ..." with the syslog priority prefix
//    and no timestamp, because journald stamps lines itself;
//  - json (SERVICE_LOG_FORMAT=json / HUB_LOG_FORMAT=json): one JSON object per line;
//  - pretty (a terminal or anything else): "HH:MM:SS.mmm LEVEL event key=value".
// Field names that look like secrets are replaced before a line is written: a key or a
// password must never reach the journal, whatever the caller passes.

import { invalid } from './env.ts';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type LogFormat = 'journald' | 'json' | 'pretty';
export type LogFields = Record<string, unknown>;

export interface Logger {
  error(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  debug(event: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
// syslog(3) priorities, which journald reads from the "<N>" prefix.
const SYSLOG_PRIORITY: Record<LogLevel, number> = { error: 3, warn: 4, info: 6, debug: 7 };
// pin and puk: a SIM's codes (an sms interface's `pin`, a `sim_pin`).
const SECRET_FIELD = /(^|_)(key|secret|password|passwd|token|authorization|psk|pin|puk)$/i;
const REDACTED = '[redacted]';

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  write?: (line: string) => void;
  now?: () => Date;
}

const LOG_FORMATS: readonly LogFormat[] = ['json', 'journald', 'pretty'];

/** SERVICE_LOG_FORMAT / HUB_LOG_FORMAT: unset or empty picks journald under systemd
 *  (JOURNAL_STREAM set) and pretty otherwise; a format's name picks it; anything else stops
 *  the start like every bad environment value (docs/design.md section 4). */
export function pickLogFormat(env: NodeJS.ProcessEnv, formatVariable: string): LogFormat {
  const raw = env[formatVariable];
  if (raw === undefined || raw === '') return env.JOURNAL_STREAM ? 'journald' : 'pretty';
  if ((LOG_FORMATS as readonly string[]).includes(raw)) return raw as LogFormat;
  throw invalid(formatVariable, `one of ${LOG_FORMATS.join(', ')}, or unset to choose by where the output goes`, raw);
}

export function createLogger(options: LoggerOptions = {}, bound: LogFields = {}): Logger {
  const level = options.level ?? 'info';
  const format = options.format ?? 'pretty';
  const write = options.write ?? ((line: string) => process.stdout.write(line + '\n'));
  const now = options.now ?? (() => new Date());

  const emit = (lvl: LogLevel, event: string, fields: LogFields = {}) => {
    if (RANK[lvl] > RANK[level]) return;
    const all = redact({ ...bound, ...fields });
    write(formatLine(format, lvl, event, all, now()));
  };
  return {
    error: (e, f) => emit('error', e, f),
    warn: (e, f) => emit('warn', e, f),
    info: (e, f) => emit('info', e, f),
    debug: (e, f) => emit('debug', e, f),
    child: (fields) => createLogger(options, { ...bound, ...fields }),
  };
}

export function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [name, value] of Object.entries(fields)) {
    out[name] = SECRET_FIELD.test(name) && value !== undefined && value !== null ? REDACTED : value;
  }
  return out;
}

function formatLine(format: LogFormat, level: LogLevel, event: string, fields: LogFields, at: Date): string {
  if (format === 'json') return JSON.stringify({ ts: at.toISOString(), level, event, ...fields });
  const pairs = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(' ');
  const tail = pairs ? ' ' + pairs : '';
  if (format === 'journald') return `<${SYSLOG_PRIORITY[level]}>${event}${tail}`;
  return `${at.toISOString().slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${event}${tail}`;
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[\s"=]/.test(text) || text === '' ? JSON.stringify(text) : text;
}

export const silentLogger: Logger = createLogger({ write: () => {} });
