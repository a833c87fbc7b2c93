import type { Clock, TimerHandle } from '../../lib/clock.ts';
import { type Command, encodeCommand, encodeFrame, isPush, type RadioMessage, type RadioMessageType } from './codec/index.ts';

// One command in flight (docs/protocols/meshcore.md 6.4): the companion firmware answers
// commands in order and its answers carry no id, so a command is matched to its answer by
// type, and the next is written only after that answer (or the timeout). Pushes (0x80 and up)
// never answer a command. Sends wait their turn in a queue.

/** What answers each command; GET_CONTACTS collects until END_OF_CONTACTS. */
const ANSWERS: Partial<Record<Command['type'], readonly RadioMessageType[]>> = {
  APP_START: ['SELF_INFO'],
  DEVICE_QUERY: ['DEVICE_INFO'],
  GET_DEVICE_TIME: ['CURR_TIME'],
  SET_DEVICE_TIME: ['OK'],
  GET_CONTACTS: ['END_OF_CONTACTS'],
  GET_CHANNEL: ['CHANNEL_INFO'],
  SEND_TXT_MSG: ['SENT'],
  // The firmware answers OK; companion_protocol.md says MSG_SENT (docs 6.5): both end it.
  SEND_CHANNEL_TXT_MSG: ['OK', 'SENT'],
  RESET_PATH: ['OK'],
  SEND_SELF_ADVERT: ['OK'],
  SEND_CHANNEL_DATA: ['OK'],
  SET_FLOOD_SCOPE_KEY: ['OK'],
  SET_DEFAULT_FLOOD_SCOPE: ['OK'],
  GET_DEFAULT_FLOOD_SCOPE: ['DEFAULT_FLOOD_SCOPE'],
};

/** Every non-push answer ends SYNC_NEXT_MESSAGE (a message of any kind, or NO_MORE_MESSAGES). */
const endsCommand = (c: Command, m: RadioMessage): boolean =>
  m.type === 'ERR' || (c.type === 'SYNC_NEXT_MESSAGE' ? !isPush(m) : (ANSWERS[c.type] ?? []).includes(m.type));

export class CommandTimeout extends Error {}

interface InFlight {
  command: Command;
  collected: RadioMessage[];
  resolve(messages: RadioMessage[]): void;
  reject(error: Error): void;
  timer: TimerHandle;
}

export class CommandChannel {
  readonly #clock: Clock;
  readonly #write: (bytes: Uint8Array) => Promise<void>;
  readonly #timeoutMs: number;
  #current: InFlight | null = null;
  #tail: Promise<unknown> = Promise.resolve();
  #closed: string | null = null;
  /** Answers that came with no command in flight (late ones after a timeout, or noise). */
  unexpected = 0;

  constructor(clock: Clock, write: (bytes: Uint8Array) => Promise<void>, timeoutMs: number) {
    this.#clock = clock;
    this.#write = write;
    this.#timeoutMs = timeoutMs;
  }

  /** Sends `c` after the commands before it; resolves with its answers, the last one the
   *  answer that ended it (ERR included); rejects with CommandTimeout, or when closed. */
  run(c: Command): Promise<RadioMessage[]> {
    const turn = this.#tail.then(() => this.#send(c));
    this.#tail = turn.catch(() => {});
    return turn;
  }

  /** Runs `body` in one turn: the commands it runs go out back to back, none of the queue's
   *  between them (a flood scope and the send it is for). */
  exclusive<T>(body: (run: (c: Command) => Promise<RadioMessage[]>) => Promise<T>): Promise<T> {
    const turn = this.#tail.then(() => body((c) => this.#send(c)));
    this.#tail = turn.catch(() => {});
    return turn;
  }

  /** A non-push frame from the radio: part of the answer in flight. */
  answer(m: RadioMessage): void {
    const f = this.#current;
    if (!f) {
      this.unexpected++;
      return;
    }
    f.collected.push(m);
    if (!endsCommand(f.command, m)) return;
    this.#current = null;
    this.#clock.clearTimeout(f.timer);
    f.resolve(f.collected);
  }

  /** Fails the command in flight and every later one (the link went away). */
  close(reason: string): void {
    this.#closed = reason;
    const f = this.#current;
    this.#current = null;
    if (f) {
      this.#clock.clearTimeout(f.timer);
      f.reject(new Error(reason));
    }
  }

  #send(c: Command): Promise<RadioMessage[]> {
    if (this.#closed !== null) return Promise.reject(new Error(this.#closed));
    let bytes: Uint8Array;
    try {
      bytes = encodeFrame('to-radio', encodeCommand(c)); // throws for a command over MAX_FRAME_SIZE
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<RadioMessage[]>((resolve, reject) => {
      const timer = this.#clock.setTimeout(() => {
        if (this.#current?.timer !== timer) return;
        this.#current = null;
        reject(new CommandTimeout(`the radio did not answer ${c.type} within ${this.#timeoutMs / 1000} s`));
      }, this.#timeoutMs);
      this.#current = { command: c, collected: [], resolve, reject, timer };
      this.#write(bytes).catch((error: Error) => {
        if (this.#current?.timer !== timer) return;
        this.#current = null;
        this.#clock.clearTimeout(timer);
        reject(error);
      });
    });
  }
}
