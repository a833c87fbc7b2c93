import type { IncomingMessage } from 'node:http';
import { AppError } from '../lib/errors.ts';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Deepest nesting of arrays and objects a JSON body may have. The deepest body a
 *  route takes, a configuration file with fallback destinations, nests 7 levels; 32
 *  leaves room, and refuses a body of 500,000 "[" (it fits in 1 MiB) before a parser, a
 *  schema or JSON.stringify walks it. */
export const MAX_JSON_DEPTH = 32;

/**
 * Reads a request body up to `limit` bytes. Past the limit it stops collecting at once (the
 * excess is never buffered) and answers 413; a declared Content-Length over the limit is
 * refused before a byte is read. With `maxDepth` the bytes are scanned as JSON while they
 * arrive (JsonDepthScanner), and a body nested deeper is refused with 400 at the first byte
 * past the limit, before anything parses it.
 */
export function readBody(req: IncomingMessage, limit: number, maxDepth?: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const scanner = maxDepth === undefined ? undefined : new JsonDepthScanner(maxDepth);
    const finish = (error: Error | null) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      if (error) {
        // Drain and discard the rest so the connection can still carry our answer.
        req.resume();
        reject(error);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(tooLarge(limit));
      else if (scanner && !scanner.push(chunk)) finish(tooDeep(maxDepth!));
      else chunks.push(chunk);
    };
    const onEnd = () => finish(null);
    const onError = (e: Error) => finish(e);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooDeep(maxDepth: number): AppError {
  return new AppError('ERR_BODY_TOO_DEEP', 400, `request body nests arrays and objects deeper than ${maxDepth} levels; the limit is ${maxDepth}`);
}

/**
 * Tracks how deeply JSON text nests while it arrives in chunks, without parsing it: counts the
 * "[" and "{" outside strings (a string's "\\" escapes the next byte, so \" does not end it).
 * It works on bytes: in UTF-8 every byte of a multi-byte character is 0x80 or above, so none
 * is mistaken for a quote, a backslash or a bracket. It does not check that the text is JSON;
 * JSON.parse does that afterwards on text that is known to be shallow.
 */
export class JsonDepthScanner {
  readonly #max: number;
  #depth = 0;
  #deepest = 0;
  #inString = false;
  #escaped = false;

  constructor(maxDepth: number) {
    this.#max = maxDepth;
  }

  /** The deepest nesting seen so far. */
  get deepest(): number {
    return this.#deepest;
  }

  /** Scans the next bytes; false as soon as the nesting goes past the limit. */
  push(chunk: Uint8Array): boolean {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (b === BACKSLASH) this.#escaped = true;
        else if (b === QUOTE) this.#inString = false;
      } else if (b === QUOTE) {
        this.#inString = true;
      } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
        if (++this.#depth > this.#deepest) this.#deepest = this.#depth;
        if (this.#depth > this.#max) return false;
      } else if ((b === CLOSE_BRACKET || b === CLOSE_BRACE) && this.#depth > 0) {
        this.#depth--;
      }
    }
    return true;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function tooLarge(limit: number): AppError {
  return new AppError('ERR_BODY_TOO_LARGE', 413, `request body is larger than ${limit} bytes`);
}

/** True for application/json and application/*+json, with any parameters. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}
