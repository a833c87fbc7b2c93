import type { SendResult } from '../bearer.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { SmsStatusReport } from './codec/index.ts';

// Status reports (docs/sms.md, "What delivered means"): with delivery_reports, a delivery is
// delivered only when the report of every part says so; a failed report fails it (for good
// when the centre gave up, retryable when it only could not deliver yet); none in time is a
// retryable failure. A report names its part by the reference +CMGS answered and the
// recipient: references repeat every 256 messages, so both are matched. A message is opened
// before its first part goes out and each reference added as +CMGS answers, so a part's
// report that comes while the next part is being sent is not lost.

interface Waiting {
  recipient: string;
  expected: Set<number>;
  delivered: Set<number>;
  /** done() was called: every part's reference is known. */
  sealed: boolean;
  resolve(result: SendResult): void;
  timer: TimerHandle;
  promise: Promise<SendResult>;
}

/** One message's reports: add each part's reference, then wait. */
export interface OpenReport {
  expect(reference: number): void;
  /** Nothing was sent after all: stop waiting. */
  cancel(): void;
  done(): Promise<SendResult>;
}

export class ReportBook {
  readonly #clock: Clock;
  readonly #waiting = new Set<Waiting>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get size(): number {
    return this.#waiting.size;
  }

  open(recipient: string, timeoutMs: number): OpenReport {
    const { promise, resolve } = Promise.withResolvers<SendResult>();
    const entry: Waiting = {
      recipient, expected: new Set(), delivered: new Set(), sealed: false, resolve, promise,
      timer: this.#clock.setTimeout(() => {
        const missing = [...entry.expected].filter((r) => !entry.delivered.has(r)).length;
        this.#finish(entry, { ok: false, retryable: true, error: `ERR_SMS_NO_REPORT: ${missing} of ${entry.expected.size} parts had no status report within ${Math.round(timeoutMs / 1000)} s` });
      }, timeoutMs),
    };
    this.#waiting.add(entry);
    return {
      expect: (reference) => void entry.expected.add(reference),
      cancel: () => this.#finish(entry, { ok: false, retryable: true, error: 'cancelled' }),
      done: () => {
        entry.sealed = true;
        this.#check(entry);
        return promise;
      },
    };
  }

  /** The older form: every reference known at once. */
  wait(recipient: string, references: number[], timeoutMs: number): Promise<SendResult> {
    const report = this.open(recipient, timeoutMs);
    for (const r of references) report.expect(r);
    return report.done();
  }

  /** A status report arrived; true when it belonged to a message we wait for. */
  settle(report: SmsStatusReport): boolean {
    const recipient = report.recipient.address;
    for (const entry of this.#waiting) {
      if (!entry.expected.has(report.messageReference) || !sameNumber(entry.recipient, recipient)) continue;
      const status = report.status;
      if (status.class === 'pending') return true; // the centre is still trying: a final report follows
      if (status.class === 'delivered') {
        entry.delivered.add(report.messageReference);
        this.#check(entry);
        return true;
      }
      const code = status.name.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '');
      this.#finish(entry, { ok: false, retryable: status.class === 'failed-temporary', error: `ERR_SMS_REPORT_${code}: the status report says the SMS was not delivered: ${status.name} (TP-ST ${status.value})` });
      return true;
    }
    return false;
  }

  /** The interface stops: every message still waiting counts as accepted, with this note. */
  acceptAll(note: string): void {
    for (const entry of [...this.#waiting]) this.#finish(entry, { ok: true, meta: { delivered: note } });
  }

  /** Delivered once every expected part is (done() was called: no part is still to come). */
  #check(entry: Waiting): void {
    if (entry.sealed && entry.expected.size > 0 && [...entry.expected].every((r) => entry.delivered.has(r))) this.#finish(entry, { ok: true });
  }

  #finish(entry: Waiting, result: SendResult): void {
    if (!this.#waiting.delete(entry)) return;
    this.#clock.clearTimeout(entry.timer);
    entry.resolve(result);
  }
}

/** Reports may write the recipient nationally or without the +: compare the last 9 digits. */
function sameNumber(a: string, b: string): boolean {
  const digits = (s: string) => s.replace(/\D/g, '').slice(-9);
  return digits(a) === digits(b);
}
