import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Link } from '../../../../src/bearers/shared/links/link.ts';
import type { SerialPortEntry } from '../../../../src/bearers/shared/links/list-ports.ts';
import { PortClaims } from '../../../../src/bearers/shared/links/port-claims.ts';
import { openLink, type OpenLinkOptions } from '../../../../src/bearers/shared/links/open-link.ts';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { DeviceError } from '../../../../src/bearers/device-error.ts';
import { createLogger } from '../../../../src/lib/log.ts';
import { answersDetect, DETECT_BURST, FakeDevice, PtyPair, rnodeProbe, waitUntil } from './fixtures/pty.ts';

const dir = mkdtempSync(join(tmpdir(), 'fb-'));
const cleanups: Array<() => Promise<unknown>> = [];
let n = 0;

async function pty(): Promise<{ pair: PtyPair; device: FakeDevice }> {
  const pair = await new PtyPair(dir, `s${n++}`).start();
  const device = await FakeDevice.open(pair.devicePath);
  cleanups.push(() => device.close(), () => pair.stop());
  return { pair, device };
}
const keep = (link: Link) => {
  cleanups.unshift(() => link.close());
  return link;
};
test.after.each(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => {});
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

const entry = (path: string, vidPid: string | null, extra: Partial<SerialPortEntry> = {}): SerialPortEntry => ({
  path,
  by_id: null,
  serial_number: null,
  vid_pid: vidPid,
  manufacturer: null,
  product: null,
  port: path,
  label: path,
  ...extra,
});

function failure(promise: Promise<unknown>): Promise<DeviceError> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: DeviceError) => {
      assert.instance(e, DeviceError);
      return e;
    },
  );
}

const quick = (extra: OpenLinkOptions = {}): OpenLinkOptions => ({ resetWaitMs: 0, claims: new PortClaims(), ...extra });

test('a device path opens directly, and a second interface cannot take the same device', async () => {
  const { pair, device } = await pty();
  const claims = new PortClaims();
  const link = keep(await openLink(pair.bridgePath, quick({ owner: 'ifc_a', ownerName: 'mesh-a', claims })));
  assert.is(link.kind, 'serial');
  await link.write(Uint8Array.from([1, 2, 3]));
  await device.waitFor(Uint8Array.from([1, 2, 3]));

  // The same pty under its /dev/pts name is the same device.
  const busy = await failure(openLink(pair.bridgeTty, quick({ owner: 'ifc_b', claims })));
  assert.is(busy.code, 'ERR_PORT_BUSY');
  assert.ok(busy.message.includes('used by interface mesh-a (ifc_a)'), busy.message);

  await link.close();
  keep(await openLink(pair.bridgeTty, quick({ owner: 'ifc_b', claims })));
});

test('after opening a serial port it waits 2 s (ESP32 reset) and drops the boot chatter', async () => {
  const { pair, device } = await pty();
  const clock = new FakeClock();
  let link: Link | null = null;
  const opening = openLink(pair.bridgePath, { clock, claims: new PortClaims() }).then((l) => (link = keep(l)));
  await waitUntil(() => clock.pending() === 1, 3000, 'no reset wait started');
  await device.write(Uint8Array.from([0xc0, 0x55, 0xf8, 0xc0])); // boot indication, docs/protocols/rnode.md 1.1
  await new Promise((r) => setTimeout(r, 100));
  clock.advance(1_999);
  await new Promise((r) => setTimeout(r, 20));
  assert.is(link, null, 'handed over before 2 s');
  clock.advance(1);
  await opening;
  const heard: number[] = [];
  link!.onData((c) => heard.push(...c));
  await device.write(Uint8Array.from([0xc0, 0x08, 0x46, 0xc0]));
  await waitUntil(() => heard.length === 4, 3000, 'nothing heard after the wait');
  assert.equal(heard, [0xc0, 0x08, 0x46, 0xc0], 'the boot chatter was passed on');
});

test('usb_serial finds the board by serial number each time, even on a new path', async () => {
  const first = await pty();
  const second = await pty();
  let ports = [entry('/dev/ttyUSB9', '10c4:ea60', { serial_number: 'OTHER' }), entry(first.pair.bridgePath, '1a86:55d4', { serial_number: '54E2012345' })];
  const options = quick({ listPorts: async () => ports });
  const a = keep(await openLink('usb_serial:54E2012345', options));
  await a.write(Uint8Array.from([7]));
  await first.device.waitFor(Uint8Array.from([7]));
  await a.close();

  // Re-enumerated: the same board now sits behind another path.
  ports = [entry(second.pair.bridgePath, '1a86:55d4', { serial_number: '54E2012345' })];
  const b = keep(await openLink('usb_serial:54E2012345', options));
  await b.write(Uint8Array.from([8]));
  await second.device.waitFor(Uint8Array.from([8]));
  assert.is(b.description, second.pair.bridgePath);

  const missing = await failure(openLink('usb_serial:NOPE', options));
  assert.is(missing.code, 'ERR_PORT_NOT_FOUND');
  assert.ok(missing.message.includes('NOPE') && missing.message.includes('54E2012345'), missing.message);
});

test('auto never opens a modem, a ZigBee stick or an unknown id; probes candidates after the reset wait; claims the first that answers', async () => {
  const modem = await pty();
  const stick = await pty();
  const unknown = await pty();
  const garbage = await pty();
  const board = await pty();
  for (const p of [modem, stick, unknown]) answersDetect(p.device); // they would answer if asked
  garbage.device.respond((all, d) => {
    if (all.includes(Buffer.from(DETECT_BURST))) void d.write(Uint8Array.from([0xff, 0x00, 0xc0, 0x08, 0x45, 0x13]));
  });
  answersDetect(board.device);
  const ports = [
    entry(modem.pair.bridgePath, '2c7c:0125', { product: 'EG25-G' }),
    entry(stick.pair.bridgePath, '10c4:ea60', { product: 'Sonoff Zigbee 3.0 USB Dongle Plus' }),
    entry(unknown.pair.bridgePath, '067b:2303'),
    entry(garbage.pair.bridgePath, '10c4:ea60', { product: 'CP2102 USB to UART Bridge Controller' }),
    entry(board.pair.bridgePath, '1a86:55d4', { product: 'USB Single Serial' }),
  ];
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', format: 'json', write: (l) => lines.push(l) });
  const clock = new FakeClock();
  const claims = new PortClaims();
  const result = openLink('auto', { clock, log, claims, owner: 'ifc_rnode', ownerName: 'lora-0', listPorts: async () => ports, probe: rnodeProbe, probeTimeoutMs: 3000 });

  // The board speaking garbage: opened, then nothing written until the 2 s reset wait is over.
  await waitUntil(() => clock.pending() === 1, 3000, 'no reset wait for the first candidate');
  await new Promise((r) => setTimeout(r, 50));
  assert.is(garbage.device.received.length, 0, 'probed before the reset wait');
  clock.advance(2000);
  await garbage.device.waitFor(DETECT_BURST);
  await new Promise((r) => setTimeout(r, 50)); // its garbage answer arrives and is not accepted
  clock.advance(3000); // probe timeout
  // The real board: reset wait, probe, answer.
  await waitUntil(() => clock.pending() === 1 && board.device.received.length === 0, 3000, 'no reset wait for the second candidate');
  clock.advance(2000);
  const link = keep(await result);
  assert.is(link.description, board.pair.bridgePath);

  for (const p of [modem, stick, unknown]) assert.is(p.device.received.length, 0, `${p.pair.bridgePath} was written to`);
  const events = lines.map((l) => JSON.parse(l));
  const probed = events.filter((e) => e.event === 'auto.probe').map((e) => e.path);
  assert.equal(probed, [garbage.pair.bridgePath, board.pair.bridgePath]);
  const skipped = events.filter((e) => e.event === 'auto.skip').map((e) => [e.path, e.verdict]);
  assert.equal(skipped, [
    [modem.pair.bridgePath, 'never'],
    [stick.pair.bridgePath, 'never'],
    [unknown.pair.bridgePath, 'unknown'],
  ]);

  // The probe's listener hears nothing of the driver's traffic; the driver's does.
  const heard: number[] = [];
  link.onData((c) => heard.push(...c));
  await board.device.write(Uint8Array.from([0x42]));
  await waitUntil(() => heard.includes(0x42), 3000, 'driver heard nothing');
  assert.is(claims.holder(board.pair.bridgeTty), 'ifc_rnode');
  assert.is(claims.holder(garbage.pair.bridgeTty), null, 'the refused candidate stays unclaimed');

  // Another interface running auto skips the claimed board and finds nothing else.
  const second = await failure(openLink('auto', { claims, owner: 'ifc_other', resetWaitMs: 0, probeTimeoutMs: 200, listPorts: async () => ports.slice(4), probe: rnodeProbe }));
  assert.is(second.code, 'ERR_PORT_NOT_FOUND');
  assert.ok(second.message.includes('used by interface lora-0 (ifc_rnode)'), second.message);
  await link.close();
  assert.is(claims.holder(board.pair.bridgeTty), null, 'closing releases the claim');
});

test('auto refuses without a probe, and explains an empty or hopeless port list', async () => {
  assert.is((await failure(openLink('auto', quick({ listPorts: async () => [] })))).code, 'ERR_PORT_UNSUPPORTED');
  const none = await failure(openLink('auto', quick({ listPorts: async () => [], probe: rnodeProbe })));
  assert.is(none.code, 'ERR_PORT_NOT_FOUND');
  assert.ok(none.message.includes('no serial ports present'), none.message);
  const gone = await failure(
    openLink('auto', quick({ listPorts: async () => [entry(join(dir, 'unplugged'), '10c4:ea60'), entry('/dev/ttyAMA0', null)], probe: rnodeProbe })),
  );
  assert.ok(gone.message.includes('unplugged: no device at') && gone.message.includes('/dev/ttyAMA0: unknown'), gone.message);
});

test('a probe that throws counts as no answer, not a crash', async () => {
  const { pair, device } = await pty();
  answersDetect(device);
  const error = await failure(
    openLink('auto', quick({ listPorts: async () => [entry(pair.bridgePath, '10c4:ea60')], probe: async () => { throw new Error('driver bug'); } })),
  );
  assert.is(error.code, 'ERR_PORT_NOT_FOUND');
  assert.ok(error.message.includes('did not answer the probe'), error.message);
});

test('tcp:// opens a TCP link and claims the board (it takes one client)', async () => {
  const sockets: Socket[] = [];
  const server = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  const port = (server.address() as { port: number }).port;
  const claims = new PortClaims();
  const link = keep(await openLink(`tcp://127.0.0.1:${port}`, { claims, owner: 'ifc_a' }));
  assert.is(link.kind, 'tcp');
  const busy = await failure(openLink(`tcp://127.0.0.1:${port}`, { claims, owner: 'ifc_b' }));
  assert.is(busy.code, 'ERR_PORT_BUSY');
});

test('bad values, sim:// without a simulator and ble:// without D-Bus fail with stable codes', async () => {
  assert.is((await failure(openLink('tcp://10.0.0.5:0'))).code, 'ERR_PORT_VALUE');
  assert.is((await failure(openLink('sim://lab'))).code, 'ERR_PORT_UNSUPPORTED');
  let asked = '';
  const simLink = { kind: 'tcp', description: 'sim', write: async () => {}, onData() {}, onClose() {}, close: async () => {} } as Link;
  assert.is(await openLink('sim://lab', { openSim: async (c) => ((asked = c), simLink) }), simLink);
  assert.is(asked, 'lab');
  assert.is((await failure(openLink('ble://RNode 3A4B', quick()))).code, 'ERR_BLE_UNAVAILABLE');
});

test.run();
