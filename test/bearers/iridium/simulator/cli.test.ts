import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { iridiumSimulator, preview } from '../../../../src/bearers/iridium/simulator/cli.ts';
import { meshtasticSimulator } from '../../../../src/bearers/meshtastic/simulator/cli.ts';
import { rnodeSimulator } from '../../../../src/bearers/rnode/simulator/cli.ts';
import { smsSimulator } from '../../../../src/bearers/sms/simulator/cli.ts';
import { waitFor } from './helpers.ts';

// `fieldbridge sim iridium`: usage errors, a modem served over TCP, the --inbox folder.
// Simulator timers are unref'd: an interval keeps the process alive until the last after().

const keepAlive = setInterval(() => {}, 1000);
test.after(() => clearInterval(keepAlive));

const OK = '\r\nOK\r\n';

test('options: only tcp, pty and verbose are shared with the other simulators, with the same meaning', () => {
  for (const other of [rnodeSimulator, meshtasticSimulator, smsSimulator]) {
    for (const name of Object.keys(iridiumSimulator.options)) {
      if (!Object.hasOwn(other.options, name)) continue;
      assert.ok(['tcp', 'pty', 'verbose'].includes(name), `--${name} collides`);
      assert.equal(iridiumSimulator.options[name], other.options[name]);
    }
  }
  assert.match(iridiumSimulator.usage, /^fieldbridge sim iridium /);
});

test('usage errors answer 2, say what was wrong and show the usage', async () => {
  const cases: [Record<string, string | string[]>, RegExp][] = [
    [{}, /at least one/],
    [{ tcp: ['nope'] }, /HOST:PORT/],
    [{ tcp: ['127.0.0.1:1'], imei: ['123'] }, /--imei "123": expected 15 digits/],
    [{ tcp: ['127.0.0.1:1'], imei: ['300434063123450', '300434063123451'] }, /2 --imei for 1 modems/],
    [{ tcp: ['127.0.0.1:1', '127.0.0.1:2'], imei: ['300434063123450', '300434063123450'] }, /each --imei must be different/],
    [{ tcp: ['127.0.0.1:1'], bars: '6' }, /--bars "6": expected 0 to 5/],
    [{ tcp: ['127.0.0.1:1'], sky: '0,x' }, /--sky "0,x"/],
    [{ tcp: ['127.0.0.1:1'], sky: '300' }, /--sky "300"/],
    [{ tcp: ['127.0.0.1:1'], 'session-ms': '-1' }, /--session-ms "-1"/],
    [{ tcp: ['127.0.0.1:1'], inbox: '/nonexistent/fieldbridge-inbox' }, /--inbox .*expected an existing folder/],
  ];
  for (const [values, why] of cases) {
    const lines: string[] = [];
    assert.is(await iridiumSimulator.run(values, { write: (l) => lines.push(l) }), 2, JSON.stringify(values));
    assert.match(lines.join('\n'), why);
    assert.match(lines.join('\n'), /fieldbridge sim iridium \(--tcp HOST:PORT \| --pty PATH\)/);
  }
});

test('fieldbridge sim iridium --tcp --inbox: files become MT messages for the first modem; big ones are refused', async () => {
  const inbox = mkdtempSync(join(tmpdir(), 'fb-iridium-inbox-'));
  const lines: string[] = [];
  const stop = new AbortController();
  let devices: string[] = [];
  const done = iridiumSimulator.run(
    { tcp: ['127.0.0.1:0', '127.0.0.1:0'], imei: ['300434063123450'], 'session-ms': '0', sky: '32', inbox, verbose: true },
    { signal: stop.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d) },
  );
  try {
    await waitFor('listening', () => devices.length === 2);
    const log = () => lines.join('\n');
    assert.match(log(), /iridium1 IMEI 300434063123450 serial \d{7}: listening on tcp:\/\/127\.0\.0\.1:\d+/);
    assert.match(log(), /iridium2 IMEI \d{15} serial \d{7}: listening/);

    writeFileSync(join(inbox, '.part'), 'hello from the web');
    renameSync(join(inbox, '.part'), join(inbox, 'msg1.txt'));
    writeFileSync(join(inbox, 'big.bin'), Buffer.alloc(271, 0x41));
    await waitFor('inbox pickup', () => /queued msg1\.txt/.test(log()) && /refused big\.bin/.test(log()));
    assert.match(log(), /inbox: queued msg1\.txt \(18 bytes\) for iridium1, 1 waiting/);
    assert.match(log(), /inbox: refused big\.bin: 271 bytes, expected 1 to 270 \(renamed big\.bin\.rejected\)/);
    assert.equal(readdirSync(inbox).sort(), ['big.bin.rejected']);

    const port = Number(/:(\d+)$/.exec(devices[0])![1]);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    const send = async (bytes: string, until: string) => {
      got = '';
      socket.write(Buffer.from(bytes, 'latin1'));
      await waitFor(JSON.stringify(until), () => got.endsWith(until));
      return got;
    };
    await send('ATE0\r', OK);
    assert.is(await send('AT+SBDWT=hi there\r', OK), OK);
    assert.is(await send('AT+SBDIX\r', OK), '\r\n+SBDIX: 32, 0, 2, 0, 0, 0\r\n' + OK, '--sky 32: the first session fails');
    assert.is(await send('AT+SBDIX\r', OK), '\r\n+SBDIX: 0, 0, 1, 1, 18, 0\r\n' + OK);
    assert.is(await send('AT+SBDRT\r', OK), '\r\n+SBDRT:\r\nhello from the web\r\n' + OK);
    assert.is(await send('AT+NOPE\r', OK.replace('OK', 'ERROR')), '\r\nERROR\r\n');
    socket.destroy();
    assert.match(log(), /iridium1: session \(SBDIX\) MO status 32, MOMSN 0, MT check failed, 0 queued/);
    assert.match(log(), /iridium1: session \(SBDIX\) MO status 0, MOMSN 0, MT 18 bytes MTMSN 1, 0 queued/);
    assert.match(log(), /iridium1: MO message MOMSN 0 received, 8 bytes: "hi there"/);
    assert.match(log(), /iridium1: host sent "AT\+SBDWT=hi there"/);
    assert.match(log(), /unknown command \+NOPE/);
    assert.ok(existsSync(join(inbox, 'big.bin.rejected')));
  } finally {
    stop.abort();
    assert.is(await done, 0);
    rmSync(inbox, { recursive: true, force: true });
  }
  assert.is(lines.at(-1), 'stopped');
});

test('preview: text as text, anything else in hex, cut after 40 bytes', () => {
  assert.is(preview(Buffer.from('hi\r\n')), '"hi\\r\\n"');
  assert.is(preview(Uint8Array.of(0, 1, 0xff)), 'hex 0001ff');
  assert.is(preview(Buffer.alloc(41, 0x61)), `"${'a'.repeat(40)}"...`);
});

test.run();
