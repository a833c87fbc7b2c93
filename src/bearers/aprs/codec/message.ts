// APRS messages, acknowledgements and rejects (docs/protocols/aprs.md 2.1; APRS 1.0.1 chapter
// 14, the reply-ack form from the APRS 1.1 addendum). Pure.

/** Longest message text (APRS 1.0.1 chapter 14). */
export const MAX_MESSAGE_TEXT = 67;
/** A message id: 1 to 5 letters or digits. */
export const MESSAGE_ID = /^[A-Za-z0-9]{1,5}$/;
/** Characters a message text may not carry: `{` starts the id, `|` and `~` are reserved. */
export const FORBIDDEN_IN_TEXT = /[|~{]/;

export type AprsMessage =
  | { type: 'message'; addressee: string; text: string; id: string | null; replyAck: string | null }
  | { type: 'ack' | 'rej'; addressee: string; id: string; replyAck: string | null };

/** `:ADDRESSEE:` with the addressee padded to nine characters. */
function head(addressee: string): string {
  if (addressee.length < 1 || addressee.length > 9 || !/^[\x21-\x7e]+$/.test(addressee)) throw new RangeError(`addressee must be 1 to 9 printable characters: ${JSON.stringify(addressee)}`);
  return `:${addressee.padEnd(9, ' ')}:`;
}

/** A message's information field; `id` null for one that wants no acknowledgement (a bulletin). */
export function encodeMessage(addressee: string, text: string, id: string | null): string {
  if ([...text].length > MAX_MESSAGE_TEXT) throw new RangeError(`message text of ${[...text].length} characters; at most ${MAX_MESSAGE_TEXT}`);
  if (FORBIDDEN_IN_TEXT.test(text) || /[\x00-\x1f\x7f]/.test(text)) throw new RangeError('message text may not hold |, ~, { or control characters');
  if (id !== null && !MESSAGE_ID.test(id)) throw new RangeError(`message id must be 1 to 5 letters or digits: ${JSON.stringify(id)}`);
  return head(addressee) + text + (id === null ? '' : `{${id}`);
}

/** An acknowledgement (`ack`) or reject (`rej`) of message `id` from `addressee`. */
export function encodeAck(type: 'ack' | 'rej', addressee: string, id: string): string {
  if (!/^[A-Za-z0-9]{1,5}(\})?$/.test(id)) throw new RangeError(`message id must be 1 to 5 letters or digits: ${JSON.stringify(id)}`);
  return head(addressee) + type + id;
}

/** Reads `:ADDRESSEE:...`; null when the field is not a message. The addressee loses its padding. */
export function decodeMessage(info: string): AprsMessage | null {
  if (info.length < 11 || info[0] !== ':' || info[10] !== ':') return null;
  const addressee = info.slice(1, 10).trimEnd();
  if (addressee === '' || /[\x00-\x20\x7f]/.test(addressee)) return null;
  const body = info.slice(11);
  const ack = /^(ack|rej)([A-Za-z0-9]{1,5})(?:\}([A-Za-z0-9]{0,5}))?\s*$/.exec(body);
  if (ack) return { type: ack[1] as 'ack' | 'rej', addressee, id: ack[2], replyAck: ack[3] === undefined || ack[3] === '' ? null : ack[3] };
  const brace = body.lastIndexOf('{');
  if (brace >= 0) {
    const tail = body.slice(brace + 1).trimEnd();
    // Reply-ack: {MM}AA, this message's id then the id it acknowledges (may be empty).
    const m = /^([A-Za-z0-9]{1,5})(?:\}([A-Za-z0-9]{0,5}))?$/.exec(tail);
    if (m) return { type: 'message', addressee, text: body.slice(0, brace), id: m[1], replyAck: m[2] === undefined || m[2] === '' ? null : m[2] };
  }
  return { type: 'message', addressee, text: body, id: null, replyAck: null };
}
