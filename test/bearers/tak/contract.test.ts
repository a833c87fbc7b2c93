// The TAK bearer against the bearer contract (test/bearers/contract.ts). Its medium is a TAK
// server: a real TCP listener in this process (tak-end.ts). The peer is that server's other
// side: a GeoChat event the bearer writes is heard by the peer's context as a text; the peer
// transmits by writing a GeoChat event from a TAK user to the bearer. The server is taken down
// by closing its listener and brought back on the same port.
import { createServer, type AddressInfo } from 'node:net';
import type { BearerContext } from '../../../src/bearers/bearer.ts';
import { COT, encodeChat, readEvent } from '../../../src/bearers/tak/cot.ts';
import { createTakBearer } from '../../../src/bearers/tak/driver.ts';
import { bearerContract, type ContractHarness } from '../contract.ts';
import { takEnd, type TakEnd } from './tak-end.ts';

const ends = new Set<TakEnd>();
let listener: BearerContext | null = null;
let sent = 0;

const onEvent = (xml: string) => {
  const r = readEvent(xml);
  if (r.type === 'chat') listener?.events.receive({ from: r.senderUid, to: r.roomId, channel: null, kind: 'text', text: r.text, payload: new TextEncoder().encode(r.text), meta: {} });
};

async function start(port?: number): Promise<TakEnd> {
  const end = await takEnd(undefined, { port, onEvent });
  ends.add(end);
  return end;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const endAt = (device: string) => [...ends].find((e) => device.endsWith(`:${e.port}`));

const harness: ContractHarness = {
  settings: { min_interval_s: 0 },
  create: (ctx) => createTakBearer(ctx),
  workingDevice: async () => `tcp://127.0.0.1:${(await start()).port}`,
  missingDevice: async () => {
    const port = await freePort();
    return { device: `tcp://127.0.0.1:${port}`, appear: async () => void (await start(port)) };
  },
  missingDeviceCanAppear: true,
  reconnects: true,
  loseDevice: async (device) => {
    const end = endAt(device)!;
    ends.delete(end);
    await end.close();
    return async () => void (await start(end.port));
  },
  destination: COT.allChatRooms,
  carriesData: false,
  makePeer: async (device, ctx) => {
    listener = ctx;
    const end = endAt(device)!;
    return {
      send: async (frame) => {
        const now = Date.now();
        end.write(encodeChat({ senderUid: 'ANDROID-peer', senderCallsign: 'PEER', roomId: COT.allChatRooms, roomName: COT.allChatRooms, messageId: `p-${++sent}`, timeMs: now, staleMs: now + 60_000, text: frame.text ?? '' }));
        return { ok: true };
      },
      expectedFrom: 'ANDROID-peer',
      close: async () => void (listener = null),
    };
  },
  cleanup: async () => {
    listener = null;
    for (const e of ends) await e.close();
    ends.clear();
  },
};

bearerContract('tak', harness).run();
