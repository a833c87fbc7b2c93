import type { SendResult } from '../bearer.ts';
import type { Clock, TimerHandle } from '../../lib/clock.ts';
import type { SmsStatusReport } from './codec/index.ts';

// Status reports (docs/sms.md, "What delivered means"): with delivery_reports, a delivery is
// delivered only when the report of every part says so; a failed report fails it (for good
// when the centre gave up, retryable when it only could not deliver yet); none in time is a
// retryable failure. A report names its part by the reference +CMGS answered and the
// recipient: references repeat every 256 messages, so both are matched.

interface Waiting {
  recipient: string;
  open: Set<number>;
  resolve(result: SendResult): void;
  timer: TimerHandle;
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

  wait(recipient: string, references: number[], timeoutMs: number): Promise<SendResult> {
    return new Promise((resolve) => {
      const entry: Waiting = {
        recipient,
        open: new Set(references),
        resolve,
        timer: this.#clock.setTimeout(() => {
          this.#waiting.delete(entry);
          resolve({ ok: false, retryable: true, error: `ERR_SMS_NO_REPORT: ${entry.open.size} of ${references.length} parts had no status report within ${Math.round(timeoutMs / 1000)} s` });
        }, timeoutMs),
      };
      this.#waiting.add(entry);
    });
  }

  /** A status report arrived; true when it belonged to a message we wait for. */
  settle(report: SmsStatusReport): boolean {
    const recipient = report.recipient.address;
    for (const entry of this.#waiting) {
      if (!entry.open.has(report.messageReference) || !sameNumber(entry.recipient, recipient)) continue;
      const status = report.status;
      if (status.class === 'pending') return true; // the centre is still trying: a final report follows
      if (status.class === 'delivered') {
        entry.open.delete(report.messageReference);
        if (entry.open.size === 0) this.#finish(entry, { ok: true });
        return true;
      }
      this.#finish(entry, { ok: false, retryable: status.class === 'failed-temporary', error: `ERR_SMS_REPORT_${status.name}: the status report says the SMS was not delivered (TP-ST ${status.value})` });
      return true;
    }
    return false;
  }

  #finish(entry: Waiting, result: SendResult): void {
    this.#waiting.delete(entry);
    this.#clock.clearTimeout(entry.timer);
    entry.resolve(result);
  }
}

/** Reports may write the recipient nationally or without the +: compare the last 9 digits. */
function sameNumber(a: string, b: string): boolean {
  const digits = (s: string) => s.replace(/\D/g, '').slice(-9);
  return digits(a) === digits(b);
}
