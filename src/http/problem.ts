import type { FieldError } from '../lib/errors.ts';

// RFC 9457 problem details (docs/design.md section 5). "type" is a stable URI per kind of error so
// clients can switch on it; "detail" says what happened to this request. Never a stack trace.

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
  request_id?: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

export const PROBLEM_BASE = 'https://fieldbridge.dev/problems/';

/** Maps an error code such as ERR_NOT_FOUND to its problem type URI ("not-found"). */
export function problemType(code: string): string {
  return PROBLEM_BASE + code.replace(/^ERR_/, '').toLowerCase().replace(/_/g, '-');
}

export function problem(status: number, code: string, detail: string, errors?: FieldError[]): Problem {
  const p: Problem = { type: problemType(code), title: TITLES[status] ?? 'Error', status, detail };
  if (errors && errors.length > 0) p.errors = errors;
  return p;
}
