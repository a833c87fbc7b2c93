import { FakeClock } from '../../../../src/lib/clock.ts';
import { encodeSubmit } from '../../../../src/bearers/sms/codec/submit.ts';
import { planMessage } from '../../../../src/bearers/sms/codec/split.ts';
import { SmsModem, type SmsModemOptions } from '../../../../src/bearers/sms/simulator/modem.ts';
import { SmsNetwork } from '../../../../src/bearers/sms/simulator/network.ts';

/** A modem with a host that records every byte it sends, driven by hand. */
export class Host {
  readonly modem: SmsModem;
  out = '';

  constructor(modem: SmsModem) {
    this.modem = modem;
    modem.attachHost((bytes) => (this.out += Buffer.from(bytes).toString('latin1')));
  }

  /** Sends bytes and returns what the modem wrote since the last take(). */
  send(text: string): string {
    this.modem.fromHost(Buffer.from(text, 'latin1'));
    return this.take();
  }

  /** A command line: "AT+CMGF=0" (CR added). */
  at(line: string): string {
    return this.send(line + '\r');
  }

  take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }
}

export function lab(options: { modems?: number; modem?: Partial<SmsModemOptions>; statusReportDelayMs?: number } = {}) {
  const clock = new FakeClock();
  const network = new SmsNetwork({ clock, statusReportDelayMs: options.statusReportDelayMs ?? 200 });
  const hosts: Host[] = [];
  for (let i = 0; i < (options.modems ?? 2); i++) hosts.push(new Host(new SmsModem({ clock, network, ...options.modem })));
  return { clock, network, hosts };
}

/** One part's SMS-SUBMIT hex and <length> for AT+CMGS. */
export function submitPdu(to: string, text: string, options: { statusReport?: boolean; reference?: number } = {}): { hex: string; length: number }[] {
  const plan = planMessage(text, { reference: options.reference ?? 7 });
  if (!plan.ok) throw new Error(plan.error);
  return plan.plan.parts.map((p) => {
    const s = encodeSubmit(p, { destination: to, statusReport: options.statusReport });
    return { hex: s.hex, length: s.tpduLength };
  });
}

/** The PDU line after a +CMGR / +CMT / +CDS header line. */
export function pduAfter(output: string, header: RegExp): string {
  const lines = output.split('\r\n');
  const i = lines.findIndex((l) => header.test(l));
  if (i < 0) throw new Error(`no ${header} in ${JSON.stringify(output)}`);
  return lines[i + 1];
}
