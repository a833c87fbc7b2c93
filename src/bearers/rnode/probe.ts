import type { Link } from '../shared/links/link.ts';
import { KissDecoder } from '../shared/codec/kiss.ts';
import { CMD, DETECT_REQUEST, DETECT_RESP } from './protocol.ts';

// The probe the device supervisor runs for the `auto` port value (docs/api.md 2.7; docs/protocols/usb-ids.md 5:
// "C0 08 73 C0 -> C0 08 46 C0"): true once the device answers the detect request as an
// RNode, false if it answers DETECT with another byte. Silence is the supervisor's timeout.

export function rnodeProbe(link: Link): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const decoder = new KissDecoder();
    link.onData((chunk) => {
      for (const f of decoder.push(chunk)) {
        if (f.command === CMD.CMD_DETECT && f.payload.length === 1) resolve(f.payload[0] === DETECT_RESP);
      }
    });
    link.write(DETECT_REQUEST).catch(reject);
  });
}
