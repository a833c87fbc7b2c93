// A scripted modem on the far end of an in-memory Link. Bytes cross with setImmediate, as
// from a real stream (like src/bearers/rnode/simulator/link.ts), never re-entrantly. The
// modem knows no AT: it waits for the literal text of each script step and answers with the
// literal bytes written by hand in the test.

import type { Link } from '../../../../src/bearers/shared/links/link.ts';

/** Wire bytes written literally; a string is read as Latin-1, one character per byte. */
export const wire = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
export const latin1 = (b: Uint8Array) => String.fromCharCode(...b);

/** Lets bytes cross the link and microtasks run: a few turns of the event loop. */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

export interface Step {
  /** Text the host must write (matched at the end of what it wrote since the last step). */
  on: string;
  /** Chunks answered, each crossing on its own; none: the modem stays silent. */
  reply?: string | string[];
}

export class FakeModem {
  /** Every write of the host, in order, as Latin-1 text. */
  readonly writes: string[] = [];
  readonly link: Link;
  #script: Step[] = [];
  #pending = '';
  #data: ((chunk: Uint8Array) => void)[] = [];
  #close: ((reason: string) => void)[] = [];
  #closed: string | null = null;
  /** Writes that reject before writes pass again (a port that went away without a close yet). */
  failWrites = 0;

  constructor() {
    this.link = {
      kind: 'serial',
      description: 'fake-modem',
      write: async (data) => {
        if (this.#closed !== null) throw new Error('fake-modem: closed');
        if (this.failWrites > 0 && this.failWrites--) throw new Error('fake-modem: write failed');
        const copy = data.slice();
        setImmediate(() => this.#fromHost(copy));
      },
      onData: (l) => void this.#data.push(l),
      onClose: (l) => void this.#close.push(l),
      close: async () => this.hangUp('closed by the host'),
    };
  }

  /** Adds steps answered in order. */
  script(...steps: Step[]): this {
    this.#script.push(...steps);
    return this;
  }

  get unanswered(): number {
    return this.#script.length;
  }

  /** Sends bytes now (a URC, a late answer, garbage), each chunk on its own turn. */
  send(...chunks: string[]): void {
    for (const c of chunks) {
      const bytes = wire(c);
      setImmediate(() => {
        if (this.#closed === null) for (const l of this.#data) l(bytes);
      });
    }
  }

  /** The link goes away from the modem's side. */
  hangUp(reason = 'unplugged'): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    for (const l of this.#close) setImmediate(() => l(reason));
  }

  #fromHost(bytes: Uint8Array): void {
    const text = latin1(bytes);
    this.writes.push(text);
    this.#pending += text;
    for (;;) {
      const step = this.#script[0];
      if (!step) return;
      const at = this.#pending.indexOf(step.on);
      if (at < 0) return;
      this.#pending = this.#pending.slice(at + step.on.length);
      this.#script.shift();
      if (step.reply !== undefined) this.send(...(Array.isArray(step.reply) ? step.reply : [step.reply]));
    }
  }
}
