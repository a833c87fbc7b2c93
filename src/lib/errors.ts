// Errors that cross a module boundary carry a stable code and an HTTP status, so the HTTP
// layer can answer them as problem+json without knowing where they came from
// (docs/style.md habit 8; the list with causes and fixes is docs/errors.md).

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(
    code: string,
    status: number,
    message: string,
    extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.errors = extra.errors;
    this.headers = extra.headers;
  }
}

export const badRequest = (message: string, errors?: FieldError[]) =>
  new AppError('ERR_VALIDATION', 400, message, { errors });
export const notFound = (what: string, ref: string) =>
  new AppError('ERR_NOT_FOUND', 404, `${what} '${ref}' does not exist`);
export const conflict = (code: string, message: string) => new AppError(code, 409, message);
/** A credential of the route's own (not an API key) is missing or wrong. */
export const unauthorized = (code: string, message: string) => new AppError(code, 401, message, { headers: { 'WWW-Authenticate': 'Bearer' } });
/** Nothing was done; the same request may succeed after `retryAfterS`. */
export const unavailable = (code: string, message: string, retryAfterS: number) => new AppError(code, 503, message, { headers: { 'Retry-After': String(retryAfterS) } });

/** Thrown by a command-line or environment check; main prints the message alone and exits. */
export class StartupError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'StartupError';
    this.exitCode = exitCode;
  }
}
