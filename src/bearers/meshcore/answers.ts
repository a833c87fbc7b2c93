import { DeviceError } from '../device-error.ts';
import { utf8OrNull } from '../shared/codec/bytes.ts';
import { ERR_NAMES, type RadioMessage } from './codec/index.ts';

// How the MeshCore driver reads and names the radio's answers (driver.ts): the text of a
// payload, an error code's name, an answer described for a log line or an error, and the
// DeviceError for a session command the radio refused.

export function textOf(payload: Uint8Array): string | null {
  return payload.includes(0) ? null : utf8OrNull(payload);
}

export const errName = (code: number | undefined) => (code === undefined ? 'an error without a code' : `ERR_CODE_${ERR_NAMES.get(code) ?? code}`);
export const ackHex = (code: number) => code.toString(16).padStart(8, '0');

export function describe(m: RadioMessage | undefined): string {
  if (!m) return 'nothing';
  if (m.type === 'ERR') return errName(m.code);
  if (m.type === 'unknown' || m.type === 'malformed') return `${m.type} code ${m.code}`;
  return m.type;
}

/** The radio answered a session command with something else: the answer (and its error code,
 *  for an ERR) as facts. */
export function refused(code: string, command: string, answer: RadioMessage | undefined): DeviceError {
  return new DeviceError(code, `the radio answered ${command} with ${describe(answer)}`, {
    retryable: true, facts: { command, answer: answer?.type ?? 'nothing', ...(answer?.type === 'ERR' && answer.code !== undefined ? { radioError: answer.code } : {}) },
  });
}

export function only<T extends RadioMessage['type']>(answer: RadioMessage[], type: T, command: string): Extract<RadioMessage, { type: T }> {
  const last = answer.at(-1);
  if (last?.type !== type) throw refused('ERR_MESHCORE_START', command, last);
  return last as Extract<RadioMessage, { type: T }>;
}
