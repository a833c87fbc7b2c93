import { StartupError } from './errors.ts';
import type { LogLevel } from './log.ts';

// Environment parsing: a bad value stops the process at start with one line naming the
// variable, what was expected and what was received (docs/design.md section 4).

export function envString(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw invalid(name, `a whole number from ${min} to ${max}`, raw);
  const value = Number(raw.trim());
  if (value < min || value > max) throw invalid(name, `a whole number from ${min} to ${max}`, raw);
  return value;
}

export function envLogLevel(env: NodeJS.ProcessEnv, name: string): LogLevel {
  const raw = envString(env, name, 'info');
  if (raw === 'error' || raw === 'warn' || raw === 'info' || raw === 'debug') return raw;
  throw invalid(name, 'one of error, warn, info, debug', raw);
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** "host:port", "[v6]:port" or ":port"; port 0 asks the kernel for a free one (tests). */
export function envListen(env: NodeJS.ProcessEnv, name: string, fallback: string): ListenAddress {
  const raw = envString(env, name, fallback);
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]*)):(\d{1,5})$/.exec(raw.trim());
  if (!match) throw invalid(name, 'host:port, for example 127.0.0.1:8080', raw);
  const port = Number(match[3]);
  if (port > 65535) throw invalid(name, 'a port from 0 to 65535', raw);
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

export function invalid(name: string, expected: string, received: string): StartupError {
  return new StartupError(`${name}: expected ${expected}, got ${JSON.stringify(received)}`);
}
