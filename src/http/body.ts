import type { IncomingMessage } from 'node:http';
import { AppError } from '../lib/errors.ts';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Reads a request body up to `limit` bytes. Past the limit it stops collecting at once (the
 * excess is never buffered) and answers 413; a declared Content-Length over the limit is
 * refused before a byte is read.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
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
      else chunks.push(chunk);
    };
    const onEnd = () => finish(null);
    const onError = (e: Error) => finish(e);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(limit: number): AppError {
  return new AppError('ERR_BODY_TOO_LARGE', 413, `request body is larger than ${limit} bytes`);
}

/** True for application/json and application/*+json, with any parameters. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}
