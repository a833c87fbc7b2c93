import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IridiumGateway } from '../../../../src/bearers/iridium/simulator/gateway.ts';
import { iridiumSimGateway, openIridiumSimLink } from '../../../../src/bearers/iridium/simulator/link.ts';
import { IridiumModem } from '../../../../src/bearers/iridium/simulator/modem.ts';
import { serveIridiumPty, serveIridiumTcp } from '../../../../src/bearers/iridium/simulator/serve.ts';
import { hex, settle, waitFor } from './helpers.ts';

// The modem over each carrier: a plain TCP socket, a pty made by socat opened with the
// serialport package at 19200 baud, and the in-process sim:// link. Real I/O: waits are
// bounded polls. Simulator timers are unref'd, so an interval keeps the process alive until
// the last test's after().

const keepAlive = setInterval(() => {}, 1000);
test.after(() => clearInterval(keepAlive));

const OK = '\r\nOK\r\n';

/** Sends bytes and waits until what came back ends with `until`; returns all of it. */
async function exchange(write: (b: Buffer) => void, got: { text: string }, bytes: string, until: string): Promise<string> {
  got.text = '';
  write(Buffer.from(bytes, 'latin1'));
  await waitFor(JSON.stringify(until), () => got.text.endsWith(until));
  return got.text;
}

/** AT, SBDWB "hello", SBDIX with one MT message waiting, SBDRB: the same bytes on every carrier. */
async function conversation(write: (b: Buffer) => void, got: { text: string }, gateway: IridiumGateway, modem: IridiumModem): Promise<void> {
  assert.is(await exchange(write, got, 'AT\r', OK), 'AT\r' + OK);
  assert.is(await exchange(write, got, 'ATE0\r', OK), 'ATE0\r' + OK);
  assert.is(await exchange(write, got, 'AT+SBDWB=5\r', 'READY\r\n'), 'READY\r\n');
  assert.is(await exchange(write, got, hex('68 65 6C 6C 6F 02 14'), OK), '\r\n0\r\n' + OK);
  gateway.queueMt(modem.imei, 'OK\r\n');
  assert.is(await exchange(write, got, 'AT+SBDIX\r', OK), '\r\n+SBDIX: 0, 0, 1, 1, 4, 0\r\n' + OK);
  // "OK\r\n" = 4F 4B 0D 0A, sum 0x00B1
  assert.is(await exchange(write, got, 'AT+SBDRB\r', 'OK\r\n' + hex('00 B1') + OK), hex('00 04 4F 4B 0D 0A 00 B1') + OK);
  assert.equal(gateway.received.map((r) => Buffer.from(r.payload).toString('latin1')), ['hello']);
}

test('TCP: a plain socket exchanges AT, SBDWB, SBDIX and SBDRB bytes; a newcomer replaces the client', async () => {
  const gateway = new IridiumGateway();
  const modem = new IridiumModem({ gateway });
  const transport = await serveIridiumTcp(modem);
  const m = /^tcp:\/\/127\.0\.0\.1:(\d+)$/.exec(transport.device);
  assert.ok(m, transport.device);
  const open = async () => {
    const got = { text: '' };
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(Number(m![1]), '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    socket.on('data', (d) => (got.text += d.toString('latin1')));
    return { socket, got };
  };
  const first = await open();
  await conversation((b) => first.socket.write(b), first.got, gateway, modem);
  const second = await open();
  await waitFor('first client dropped', () => first.socket.destroyed || first.socket.readableEnded);
  assert.is(await exchange((b) => second.socket.write(b), second.got, 'AT+SBDS\r', OK), '\r\n+SBDS: 1, 1, 1, 1\r\n' + OK, 'the modem kept its state');
  second.socket.destroy();
  await transport.close();
  modem.close();
});

test('pty: the serialport package at 19200 baud exchanges the same bytes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fb-iridium-pty-'));
  const path = join(dir, 'rockblock');
  const gateway = new IridiumGateway();
  const modem = new IridiumModem({ gateway });
  const transport = await serveIridiumPty(modem, { path });
  const port = new SerialPort({ path, baudRate: 19200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  const got = { text: '' };
  port.on('data', (d: Buffer) => (got.text += d.toString('latin1')));
  try {
    assert.is(transport.device, path);
    await conversation((b) => port.write(b), got, gateway, modem);
  } finally {
    await new Promise<void>((resolve) => port.close(() => resolve()));
    await transport.close();
    modem.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

let channels = 0;
const freshChannel = () => `iridium-transports-${process.pid}-${++channels}`;

test('sim:// link: bytes cross asynchronously; the channel\'s gateway reaches the modem; a closed link plugs back in', async () => {
  const channel = freshChannel();
  const link = await openIridiumSimLink(channel);
  assert.is(link.description, `sim://${channel}`);
  const gateway = iridiumSimGateway(channel);
  assert.is(link.modem.gateway, gateway);
  const got = { text: '' };
  link.onData((d) => (got.text += Buffer.from(d).toString('latin1')));
  await link.write(Buffer.from('AT\r'));
  assert.is(got.text, '', 'not re-entrant: the answer comes later');
  assert.is(link.modem.counters.commands, 0, 'not even the command has arrived');
  await waitFor('OK', () => got.text === 'AT\r' + OK);
  await conversation((b) => void link.write(b), got, gateway, link.modem);
  const other = await openIridiumSimLink(channel);
  assert.is.not(other.modem.imei, link.modem.imei);
  const modem = link.modem;
  await link.close();
  gateway.queueMt(modem.imei, 'while unplugged');
  const again = await openIridiumSimLink(channel, { imei: modem.imei });
  assert.is(again.modem, modem, 'the same modem: IMEI and buffers kept');
  assert.is(gateway.queued(modem.imei), 1);
  const heard = { text: '' };
  again.onData((d) => (heard.text += Buffer.from(d).toString('latin1')));
  await again.write(Buffer.from('AT+SBDIX\r'));
  await waitFor('session', () => heard.text.endsWith(OK));
  assert.is(heard.text, '\r\n+SBDIX: 0, 1, 1, 2, 15, 0\r\n' + OK, 'echo stayed off; the MO buffer went again');
  assert.is(gateway.received.filter((r) => r.duplicate).length, 1);
  await settle(10);
  await again.close();
  await other.close();
  assert.is(iridiumSimGateway(freshChannel()) === gateway, false, 'another channel, another gateway');
});

test.run();
