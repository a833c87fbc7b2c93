import type { Link } from '../shared/links/link.ts';
import { encodeToRadioFrame, StreamDecoder, WAKE_BYTES } from './codec/messages.ts';
import { newNonce } from './handshake.ts';

// The probe for the `auto` port value (docs/meshtastic.md, "Port values"): a board is claimed
// only when it answers want_config_id with a stream-API frame (0x94 0xC3). The firmware sends
// nothing before a host's first valid frame, so silence is the open-link timeout, and debug
// text alone proves nothing.

export function meshtasticProbe(link: Link): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const decoder = new StreamDecoder();
    link.onData((chunk) => {
      if (decoder.push(chunk).some((e) => e.type === 'frame')) resolve(true);
    });
    const hello = new Uint8Array([...WAKE_BYTES, ...encodeToRadioFrame({ want_config_id: newNonce() })]);
    link.write(hello).catch(reject);
  });
}
