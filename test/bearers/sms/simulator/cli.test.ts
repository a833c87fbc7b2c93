import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { smsSimulator } from '../../../../src/bearers/sms/simulator/cli.ts';
import { meshtasticSimulator } from '../../../../src/bearers/meshtastic/simulator/cli.ts';
import { rnodeSimulator } from '../../../../src/bearers/rnode/simulator/cli.ts';
import { openSmsSimLink, smsSimNetwork } from '../../../../src/bearers/sms/simulator/link.ts';

test('options: only tcp, pty and verbose are shared with the other simulators, with the same meaning', () => {
  for (const other of [rnodeSimulator, meshtasticSimulator]) {
    for (const name of Object.keys(smsSimulator.options)) {
      if (!Object.hasOwn(other.options, name)) continue;
      assert.ok(['tcp', 'pty', 'verbose'].includes(name), `--${name} collides`);
      assert.equal(smsSimulator.options[name], other.options[name]);
    }
  }
});

test('usage errors answer 2 and say what was wrong', async () => {
  for (const [values, why] of [[{}, /at least one/], [{ tcp: ['nope'] }, /HOST:PORT/], [{ tcp: ['127.0.0.1:1'], number: ['123'] }, /E\.164/], [{ pty: ['/tmp/x'], pin: '12' }, /4 to 8 digits/]] as const) {
    const lines: string[] = [];
    assert.is(await smsSimulator.run(values as Record<string, string[]>, { write: (l) => lines.push(l) }), 2);
    assert.match(lines.join('\n'), why);
  }
});

test('fieldbridge sim sms --tcp serves a modem with the given number and stops on abort', async () => {
  const lines: string[] = [];
  const stop = new AbortController();
  let devices: string[] = [];
  const done = smsSimulator.run({ tcp: ['127.0.0.1:0'], number: ['+4915550001'], verbose: true }, { signal: stop.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d) });
  const until = Date.now() + 5000;
  while (devices.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  const port = Number(/:(\d+)$/.exec(devices[0])![1]);
  const socket = connect(port, '127.0.0.1');
  let got = '';
  socket.on('data', (d) => (got += d.toString('latin1')));
  await new Promise((r) => socket.once('connect', r));
  socket.write('ATE0\rAT+CNUM\rAT+CGMI\r');
  while (!got.includes('Fieldbridge') && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.match(got, /ATE0\r\r\nOK\r\n\r\nERROR\r\n\r\nFieldbridge\r\n\r\nOK\r\n/);
  socket.destroy();
  stop.abort();
  assert.is(await done, 0);
  assert.match(lines.join('\n'), /sms1 \+4915550001: listening on tcp:\/\/127\.0\.0\.1:\d+/);
  assert.match(lines.join('\n'), /unknown command \+CNUM/);
});

test('sim://<channel>: two links on one network text each other; another channel is another network', async () => {
  const a = await openSmsSimLink('lab');
  const b = await openSmsSimLink('lab');
  const c = await openSmsSimLink('elsewhere');
  assert.is(a.modem.number, '+15550000001');
  assert.is(b.modem.number, '+15550000002');
  assert.is(c.modem.number, '+15550000001');
  assert.is(smsSimNetwork('lab').numbers.length, 2);
  let heard = '';
  b.onData((d) => (heard += Buffer.from(d).toString('latin1')));
  await b.write(Buffer.from('ATE0;+CNMI=2,1,0,0,0\r'));
  await new Promise((r) => setTimeout(r, 10));
  smsSimNetwork('lab').inject('+15559990000', b.modem.number, 'over sim://');
  const until = Date.now() + 2000;
  while (!heard.includes('+CMTI') && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  assert.match(heard, /\+CMTI: "SM",1/);
  await b.close();
  const again = await openSmsSimLink('lab', { number: b.modem.number });
  assert.is(again.modem, b.modem, 'plugged back in: same modem, messages kept');
  assert.is(again.modem.storage.used, 1);
  for (const l of [a, again, c]) await l.close();
});

test.run();
