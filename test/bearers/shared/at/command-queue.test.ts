import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeClock } from '../../../../src/lib/clock.ts';
import { sbdChecksum } from '../../../../src/bearers/iridium/sbd.ts';
import { pduSubmitBody } from '../../../../src/bearers/sms/codec/submit.ts';
import { AtSession, type AtResult, type AtSessionOptions, type AtUrc } from '../../../../src/bearers/shared/at/command-queue.ts';
import { FakeModem, settle, wire } from './fake-modem.ts';

// PDUs written by hand (the same as test/bearers/shared/codec/at.test.ts): a SUBMIT of "hellohello"
// (23 TPDU octets after the 00 SMSC octet), a DELIVER (28) and a STATUS-REPORT (25).
const SUBMIT = '0011000B916407281553F80000AA0AE8329BFD4697D9EC37';
const DELIVER = '07917283010010F5040BC87238880900F10000993092516195800AE8329BFD4697D9EC37';
const STATUS_REPORT = '07911326040000F006450B911326880736F4214030411040802140304110458000';

function setup(options: Partial<AtSessionOptions> = {}) {
  const clock = new FakeClock();
  const modem = new FakeModem();
  const session = new AtSession(modem.link, { clock, ...options });
  return { clock, modem, session };
}

/** Tracks a promise so a test can ask whether it settled yet. */
function track(p: Promise<AtResult>) {
  const t: { result: AtResult | null; done: Promise<AtResult> } = { result: null, done: p };
  void p.then((r) => (t.result = r));
  return t;
}

const OK_RESULT = { ok: true, error: null, final: 'OK', code: null, text: null };

test('AT -> OK: the command goes out with one CR, the result is ok', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT\r', reply: '\r\nOK\r\n' });
  const r = await session.run('AT');
  assert.equal(modem.writes, ['AT\r']);
  assert.equal({ ok: r.ok, error: r.error, final: r.final, code: r.code, text: r.text }, OK_RESULT);
  assert.equal(r.info, []);
  assert.is(session.stats().commands, 1);
  assert.is(session.stats().ok, 1);
  assert.is(session.waiting, null);
});

test('information lines and their data lines come back in order', async () => {
  const { modem, session } = setup();
  modem.script(
    { on: 'AT+CSQ\r', reply: '\r\n+CSQ: 21,99\r\n\r\nOK\r\n' },
    { on: 'AT+CMGL=4\r', reply: `\r\n+CMGL: 1,1,,28\r\n${DELIVER}\r\n+CMGL: 2,0,,28\r\n${DELIVER}\r\n\r\nOK\r\n` },
  );
  const csq = await session.run('AT+CSQ');
  assert.equal(csq.info, ['+CSQ: 21,99']);
  assert.equal(csq.bodies, [null]);
  const list = await session.run('AT+CMGL=4');
  assert.equal(list.info, ['+CMGL: 1,1,,28', '+CMGL: 2,0,,28']);
  assert.equal(list.bodies, [DELIVER, DELIVER]);
});

test('concurrent run() calls go out one at a time, in call order, each after the previous answer', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT+CSQ\r' }, { on: 'AT+CREG?\r' }, { on: 'AT+COPS?\r' });
  const a = track(session.run('AT+CSQ'));
  const b = track(session.run('AT+CREG?'));
  const c = track(session.run('AT+COPS?'));
  await settle();
  assert.equal(modem.writes, ['AT+CSQ\r'], 'nothing else is written while AT+CSQ waits');
  assert.is(session.stats().queued, 2);
  modem.send('\r\n+CSQ: 14,99\r\n', '\r\nOK\r\n');
  await settle();
  assert.ok(a.result?.ok);
  assert.equal(a.result?.info, ['+CSQ: 14,99']);
  assert.is(b.result, null);
  assert.equal(modem.writes, ['AT+CSQ\r', 'AT+CREG?\r']);
  modem.send('\r\n+CREG: 0,1\r\n\r\nOK\r\n');
  await settle();
  assert.equal(b.result?.info, ['+CREG: 0,1'], 'the +CREG line answers AT+CREG?, it is no URC');
  assert.equal(modem.writes, ['AT+CSQ\r', 'AT+CREG?\r', 'AT+COPS?\r']);
  modem.send('\r\n+COPS: 0,0,"Telekom.de"\r\n\r\nOK\r\n');
  const r = await c.done;
  assert.equal(r.info, ['+COPS: 0,0,"Telekom.de"']);
  assert.is(session.stats().urcs, 0);
});

test('an answer split into single bytes is read the same', async () => {
  const { modem, session } = setup();
  const answer = '\r\n+CMGS: 12\r\n\r\nOK\r\n';
  modem.script({ on: 'AT+CMGS=23\r', reply: '\r\n> ' }, { on: '\x1a', reply: Array.from(answer) });
  const r = await session.run('AT+CMGS=23', { promptData: pduSubmitBody(SUBMIT), timeoutMs: 60_000 });
  assert.equal({ ok: r.ok, info: r.info }, { ok: true, info: ['+CMGS: 12'] });
});

test('per-command timeout on the fake clock: TIMEOUT, then the queue moves on after the settle time', async () => {
  const { clock, modem, session } = setup();
  modem.script({ on: 'AT+SBDIX\r' }, { on: 'AT\r', reply: '\r\nOK\r\n' });
  const ix = track(session.run('AT+SBDIX', { timeoutMs: 60_000 }));
  const at = track(session.run('AT'));
  await settle();
  clock.advance(59_999);
  await settle();
  assert.is(ix.result, null, 'not before its own timeout');
  clock.advance(1);
  await settle();
  assert.equal({ ok: ix.result?.ok, error: ix.result?.error, final: ix.result?.final, escaped: ix.result?.escaped }, {
    ok: false, error: 'TIMEOUT', final: null, escaped: false,
  });
  assert.equal(modem.writes, ['AT+SBDIX\r'], 'the next command waits out the settle time');
  clock.advance(1_000);
  const r = await at.done;
  assert.ok(r.ok);
  assert.equal(modem.writes, ['AT+SBDIX\r', 'AT\r']);
  const s = session.stats();
  assert.equal({ timeouts: s.timeouts, consecutive: s.consecutiveTimeouts, ok: s.ok }, { timeouts: 1, consecutive: 0, ok: 1 });
  assert.is(clock.pending(), 0, 'no timer left behind');
});

test('the default timeout is 5 s; a late answer after a timeout is stray, not the next command\'s', async () => {
  const { clock, modem, session } = setup();
  modem.script({ on: 'AT+CSQ\r' });
  const csq = track(session.run('AT+CSQ'));
  const creg = track(session.run('AT+CREG?'));
  await settle();
  clock.advance(4_999);
  await settle();
  assert.is(csq.result, null);
  clock.advance(1);
  await settle();
  assert.is(csq.result?.error, 'TIMEOUT');
  // The late answer arrives during the settle time and ends nothing.
  modem.send('\r\n+CSQ: 9,99\r\n\r\nOK\r\n');
  await settle();
  assert.is(session.stats().stray, 2);
  modem.script({ on: 'AT+CREG?\r', reply: '\r\n+CREG: 0,5\r\n\r\nOK\r\n' });
  clock.advance(1_000);
  assert.equal((await creg.done).info, ['+CREG: 0,5']);
});

test('a timeout at the "> " prompt writes ESC to free the modem (sms.md 4.6)', async () => {
  const { clock, modem, session } = setup();
  // The prompt comes, nothing is given to write, the modem waits for the body forever.
  modem.script({ on: 'AT+CMGS=23\r', reply: '\r\n> ' });
  const p = track(session.run('AT+CMGS=23', { expectPrompt: true, timeoutMs: 60_000 }));
  await settle();
  clock.advance(60_000);
  await settle();
  assert.equal(modem.writes, ['AT+CMGS=23\r', '\x1b']);
  const r = p.result!;
  assert.equal({ ok: r.ok, error: r.error, prompted: r.prompted, dataWritten: r.dataWritten, escaped: r.escaped }, {
    ok: false, error: 'TIMEOUT', prompted: true, dataWritten: false, escaped: true,
  });
  assert.is(session.stats().escapes, 1);
});

test('a send that times out after its body is ambiguous: dataWritten, and ESC all the same', async () => {
  const { clock, modem, session } = setup();
  modem.script({ on: 'AT+CMGS=23\r', reply: '\r\n> ' });
  const p = track(session.run('AT+CMGS=23', { promptData: pduSubmitBody(SUBMIT), timeoutMs: 120_000 }));
  await settle();
  clock.advance(120_000);
  await settle();
  assert.equal(modem.writes, ['AT+CMGS=23\r', SUBMIT, '\x1a', '\x1b']);
  assert.equal({ prompted: p.result?.prompted, dataWritten: p.result?.dataWritten, escaped: p.result?.escaped }, {
    prompted: true, dataWritten: true, escaped: true,
  });
});

test('no ESC when the prompt never came, nor at an Iridium READY', async () => {
  const { clock, modem, session } = setup({ settleMs: 0 });
  modem.script({ on: 'AT+CMGS=23\r' }, { on: 'AT+SBDWB=5\r', reply: 'READY\r\n' });
  const a = session.run('AT+CMGS=23', { expectPrompt: true });
  await settle();
  clock.advance(5_000);
  assert.equal((await a).escaped, false);
  const b = session.run('AT+SBDWB=5', { expectPrompt: true, timeoutMs: 70_000 });
  await settle();
  clock.advance(70_000);
  const r = await b;
  assert.equal({ prompted: r.prompted, escaped: r.escaped, error: r.error }, { prompted: true, escaped: false, error: 'TIMEOUT' });
  assert.equal(modem.writes, ['AT+CMGS=23\r', 'AT+SBDWB=5\r']);
});

test('3 timeouts in a row declare the modem unresponsive, once, before the next command is written', async () => {
  const { clock, modem, session } = setup({ settleMs: 0 });
  const reasons: string[] = [];
  session.onUnresponsive((reason) => {
    reasons.push(reason);
    session.close('reopening');
  });
  const runs = ['AT', 'AT+CSQ', 'AT+CREG?', 'AT+COPS?'].map((c) => track(session.run(c)));
  for (let i = 0; i < 3; i++) {
    await settle();
    clock.advance(5_000);
  }
  await settle();
  assert.is(reasons.length, 1);
  assert.match(reasons[0], /3 AT commands in a row timed out, the last AT\+CREG\? after 5000 ms/);
  assert.equal(modem.writes, ['AT\r', 'AT+CSQ\r', 'AT+CREG?\r'], 'the fourth was never written');
  assert.equal(runs.map((r) => r.result?.error), ['TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'CLOSED']);
  assert.is(session.stats().unresponsive, 1);
});

test('an answer between timeouts resets the count', async () => {
  const { clock, modem, session } = setup({ settleMs: 0, unresponsiveAfter: 2 });
  let unresponsive = 0;
  session.onUnresponsive(() => unresponsive++);
  modem.script({ on: 'AT+CSQ\r' }, { on: 'AT\r', reply: '\r\nERROR\r\n' }, { on: 'AT+CSQ\r' }, { on: 'AT+CSQ\r' });
  const first = session.run('AT+CSQ');
  await settle();
  clock.advance(5_000);
  await first;
  assert.is((await session.run('AT')).error, 'ERROR', 'an error is an answer: the modem is alive');
  assert.is(session.stats().consecutiveTimeouts, 0);
  for (let i = 0; i < 2; i++) {
    const p = session.run('AT+CSQ');
    await settle();
    clock.advance(5_000);
    await p;
  }
  assert.is(unresponsive, 1);
});

test('a +CMTI arriving between +CMGS: 5 and OK reaches its handler; the answer is whole', async () => {
  const { modem, session } = setup();
  const heard: AtUrc[] = [];
  session.onUrc('+CMTI', (u) => void heard.push(u));
  modem.script(
    { on: 'AT+CMGS=23\r', reply: '\r\n> ' },
    { on: '\x1a', reply: ['\r\n+CMGS: 5\r\n', '\r\n+CMTI: "SM",3\r\n'] },
  );
  const p = track(session.run('AT+CMGS=23', { promptData: pduSubmitBody(SUBMIT), timeoutMs: 60_000 }));
  await settle();
  assert.equal(heard, [{ name: '+CMTI', line: '+CMTI: "SM",3', body: null }], 'heard while the command still waits');
  assert.is(p.result, null);
  modem.send('\r\nOK\r\n');
  const r = await p.done;
  assert.equal({ ok: r.ok, info: r.info }, { ok: true, info: ['+CMGS: 5'] });
  assert.is(session.stats().urcs, 1);
});

test('a URC handler that runs a command: queued behind the waiting one, no deadlock', async () => {
  const { modem, session } = setup();
  const read: AtResult[] = [];
  session.onUrc('+CMTI', async (u) => {
    const m = /,(\d+)$/.exec(u.line)!;
    read.push(await session.run(`AT+CMGR=${m[1]}`));
    read.push(await session.run(`AT+CMGD=${m[1]}`));
  });
  modem.script(
    { on: 'AT+CSQ\r', reply: '\r\n+CMTI: "SM",4\r\n' },
    { on: 'AT+CMGR=4\r', reply: `\r\n+CMGR: 0,,28\r\n${DELIVER}\r\n\r\nOK\r\n` },
    { on: 'AT+CMGD=4\r', reply: '\r\nOK\r\n' },
  );
  const csq = track(session.run('AT+CSQ'));
  await settle();
  assert.equal(modem.writes, ['AT+CSQ\r'], 'AT+CMGR waits for AT+CSQ');
  assert.is(session.stats().queued, 1);
  modem.send('\r\n+CSQ: 20,99\r\n\r\nOK\r\n');
  await settle();
  assert.ok(csq.result?.ok);
  assert.equal(modem.writes, ['AT+CSQ\r', 'AT+CMGR=4\r', 'AT+CMGD=4\r']);
  assert.equal(read.map((r) => [r.ok, r.info, r.bodies]), [
    [true, ['+CMGR: 0,,28'], [DELIVER]],
    [true, [], []],
  ]);
});

test('a URC while idle: the handler runs a command at once', async () => {
  const { modem, session } = setup();
  const done: AtResult[] = [];
  session.onUrc('SBDRING', async () => void done.push(await session.run('AT+SBDIXA', { timeoutMs: 60_000 })));
  modem.script({ on: 'AT+SBDIXA\r', reply: '\r\n+SBDIX: 0, 12, 1, 5, 5, 0\r\n\r\nOK\r\n' });
  modem.send('\r\nSBDRING\r\n');
  await settle(20);
  assert.equal(done.map((r) => r.info), [['+SBDIX: 0, 12, 1, 5, 5, 0']]);
});

test('a two-line +CDS URC comes with its PDU line, split anywhere, also inside an answer', async () => {
  const { modem, session } = setup();
  const heard: AtUrc[] = [];
  session.onUrc('+CDS', (u) => void heard.push(u));
  const cds = `\r\n+CDS: 25\r\n${STATUS_REPORT}\r\n`;
  modem.send(cds.slice(0, 9), cds.slice(9, 20), cds.slice(20));
  await settle();
  modem.script({ on: 'AT+CSQ\r', reply: ['\r\n+CSQ: 9,99\r\n' + cds.slice(0, 12), cds.slice(12) + '\r\nOK\r\n'] });
  const r = await session.run('AT+CSQ');
  await settle();
  const expected = { name: '+CDS', line: '+CDS: 25', body: STATUS_REPORT };
  assert.equal(heard, [expected, expected]);
  assert.equal(r.info, ['+CSQ: 9,99']);
});

test('handlers: by name and "*", unsubscribe, a throwing handler is counted and harms nothing', async () => {
  const { modem, session } = setup();
  const all: string[] = [];
  const ring: string[] = [];
  session.onUrc('*', (u) => void all.push(u.name));
  const off = session.onUrc('RING', (u) => void ring.push(u.line));
  session.onUrc('+CREG', () => {
    throw new Error('boom');
  });
  session.onUrc('+CIEV', async () => {
    throw new Error('async boom');
  });
  modem.send('\r\nRING\r\n\r\n+CREG: 5\r\n\r\n+CIEV:1,1\r\n');
  await settle();
  off();
  modem.send('\r\nRING\r\n');
  await settle();
  assert.equal(all, ['RING', '+CREG', '+CIEV', 'RING']);
  assert.equal(ring, ['RING']);
  const s = session.stats();
  assert.equal({ urcs: s.urcs, handlerErrors: s.handlerErrors, unhandled: s.unhandledUrcs }, { urcs: 4, handlerErrors: 2, unhandled: 0 });
});

test('a URC nobody handles is counted as unhandled', async () => {
  const { modem, session } = setup();
  modem.send('\r\n+CUSD: 0,"hi",15\r\n');
  await settle();
  assert.equal({ urcs: session.stats().urcs, unhandled: session.stats().unhandledUrcs }, { urcs: 1, unhandled: 1 });
});

test('+CME/+CMS ERROR resolve ok:false with their numbers; plain ERROR without one; never a rejection', async () => {
  const { modem, session } = setup();
  modem.script(
    { on: 'AT+CMGS=23\r', reply: '\r\n+CMS ERROR: 331\r\n' },
    { on: 'AT+CPIN?\r', reply: '\r\n+CME ERROR: 10\r\n' },
    { on: 'AT+CPIN?\r', reply: '\r\n+CME ERROR: SIM not inserted\r\n' },
    { on: 'AT+CMGF=1\r', reply: '\r\nERROR\r\n' },
    { on: 'AT+CMGD=1\r', reply: '\r\n+CMS ERROR: 321\r\n' },
  );
  const results = await Promise.all([
    session.run('AT+CMGS=23', { expectPrompt: true }),
    session.run('AT+CPIN?'),
    session.run('AT+CPIN?'),
    session.run('AT+CMGF=1'),
    session.run('AT+CMGD=1'),
  ]);
  assert.equal(results.map((r) => [r.ok, r.error, r.final, r.code, r.text]), [
    [false, 'ERROR', '+CMS ERROR', 331, null],
    [false, 'ERROR', '+CME ERROR', 10, null],
    [false, 'ERROR', '+CME ERROR', null, 'SIM not inserted'],
    [false, 'ERROR', 'ERROR', null, null],
    [false, 'ERROR', '+CMS ERROR', 321, null],
  ]);
  assert.is(results[0].prompted, false);
  assert.is(session.stats().errors, 5);
});

test('echo on and off give the same results; echoes are counted and dropped', async () => {
  for (const echo of [false, true]) {
    const { modem, session } = setup();
    const e = (cmd: string) => (echo ? `${cmd}\r` : '');
    modem.script(
      { on: 'AT+CSQ\r', reply: `${e('AT+CSQ')}\r\n+CSQ: 21,99\r\n\r\nOK\r\n` },
      { on: 'AT+CMGS=23\r', reply: `${e('AT+CMGS=23')}\r\n> ` },
      // The body comes back as typed, Ctrl-Z included (sms.md 4.2), before the answer.
      { on: '\x1a', reply: `${echo ? `${SUBMIT}\x1a` : ''}\r\n+CMGS: 7\r\n\r\nOK\r\n` },
      { on: 'AT+CREG?\r', reply: `${e('AT+CREG?')}\r\n+CREG: 0,1\r\n\r\nOK\r\n` },
    );
    const csq = await session.run('AT+CSQ');
    const cmgs = await session.run('AT+CMGS=23', { promptData: pduSubmitBody(SUBMIT) });
    const creg = await session.run('AT+CREG?');
    const label = echo ? 'echo on' : 'echo off';
    assert.equal([csq.info, cmgs.info, creg.info], [['+CSQ: 21,99'], ['+CMGS: 7'], ['+CREG: 0,1']], label);
    assert.ok(csq.ok && cmgs.ok && creg.ok, label);
    assert.is(session.stats().echoes, echo ? 4 : 0, label);
    assert.is(session.stats().garbage + session.stats().stray, 0, label);
  }
});

test('garbage between answers is counted and ignored', async () => {
  const { modem, session } = setup();
  modem.script(
    { on: 'AT\r', reply: '\r\nOK\r\n\xff\xfe\x80\r\n' },
    { on: 'AT+CSQ\r', reply: ['\r\n+CSQ: 1\xff\r\n', '\x00\x00\r\n+CSQ: 5,99\r\n\r\nOK\r\n'] },
  );
  assert.ok((await session.run('AT')).ok);
  await settle();
  const csq = await session.run('AT+CSQ');
  assert.equal({ ok: csq.ok, info: csq.info }, { ok: true, info: ['+CSQ: 5,99'] });
  const s = session.stats();
  assert.is(s.garbage, 2);
  assert.is(s.decoder.invalidUtf8, 2);
  assert.is(s.decoder.nul, 2);
});

test('close() while one command waits and two are queued: all settle CLOSED, nothing more is written', async () => {
  const { clock, modem, session } = setup();
  modem.script({ on: 'AT+SBDIX\r', reply: '\r\n+SBDIX: 32, 1' });
  const waiting = track(session.run('AT+SBDIX', { timeoutMs: 60_000 }));
  const queued = [track(session.run('AT+SBDD0')), track(session.run('AT+CSQ'))];
  await settle();
  session.close('stopping');
  await settle();
  assert.equal(waiting.result?.error, 'CLOSED');
  assert.equal(queued.map((q) => q.result?.error), ['CLOSED', 'CLOSED']);
  assert.is(session.closed, true);
  assert.is(clock.pending(), 0, 'the timeout was cleared');
  const late = await session.run('AT');
  assert.equal({ ok: late.ok, error: late.error }, { ok: false, error: 'CLOSED' });
  assert.equal(modem.writes, ['AT+SBDIX\r']);
  assert.is(session.stats().closed, 4);
});

test('bytes after close are ignored: no handler, no counter moves', async () => {
  const { modem, session } = setup();
  let heard = 0;
  session.onUrc('*', () => void heard++);
  session.close();
  modem.send('\r\n+CMTI: "SM",1\r\n', '\r\nOK\r\n', '\xff\r\n');
  await settle();
  assert.is(heard, 0);
  const s = session.stats();
  assert.equal([s.urcs, s.stray, s.garbage], [0, 0, 0]);
});

test('a URC read just before close() is not delivered after it', async () => {
  const { modem, session } = setup();
  let heard = 0;
  session.onUrc('RING', () => void heard++);
  modem.link.onData(() => session.close()); // listeners run in order: the session reads first
  modem.send('\r\nRING\r\n');
  await settle();
  assert.is(heard, 0);
});

test('the link closing by itself closes the session', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT+CSQ\r' });
  const p = track(session.run('AT+CSQ'));
  await settle();
  modem.hangUp('unplugged');
  await settle();
  assert.is(p.result?.error, 'CLOSED');
  assert.is(session.closed, true);
});

test('a write the link refuses settles WRITE and the queue goes on', async () => {
  const { modem, session } = setup();
  modem.failWrites = 1;
  modem.script({ on: 'AT+CSQ\r', reply: '\r\nOK\r\n' });
  const a = session.run('AT');
  const b = session.run('AT+CSQ');
  assert.is((await a).error, 'WRITE');
  assert.ok((await b).ok);
  assert.is(session.stats().writeErrors, 1);
});

test('PDU send flow: AT+CMGS=23, prompt, hex then Ctrl-Z in a write of its own, +CMGS: 7 OK', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT+CMGS=23\r', reply: '\r\n> ' }, { on: `${SUBMIT}\x1a`, reply: '\r\n+CMGS: 7\r\n\r\nOK\r\n' });
  const r = await session.run('AT+CMGS=23', { promptData: pduSubmitBody(SUBMIT), timeoutMs: 120_000 });
  assert.equal(modem.writes, ['AT+CMGS=23\r', SUBMIT, '\x1a']);
  assert.equal(
    { ok: r.ok, info: r.info, prompted: r.prompted, dataWritten: r.dataWritten, escaped: r.escaped },
    { ok: true, info: ['+CMGS: 7'], prompted: true, dataWritten: true, escaped: false },
  );
  assert.is(Number(/\d+$/.exec(r.info[0])![0]), 7);
});

test('"> " in an answer when no prompt is expected is text, and nothing is written', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT+CUSD=1\r', reply: '\r\n> \r\nOK\r\n' });
  const r = await session.run('AT+CUSD=1');
  assert.equal({ ok: r.ok, info: r.info, prompted: r.prompted }, { ok: true, info: ['>'], prompted: false });
  assert.equal(modem.writes, ['AT+CUSD=1\r']);
});

test('Iridium binary read: AT+SBDRB, length, bytes holding CR LF and "OK", checksum, OK', async () => {
  for (const echo of [false, true]) {
    const { modem, session } = setup();
    const payload = '\r\nOK\r\n';
    const sum = sbdChecksum(wire(payload)); // 0x00C8
    const checksum = String.fromCharCode(sum >> 8, sum & 0xff);
    const answer = `${echo ? 'AT+SBDRB\r' : ''}\x00\x06${payload}${checksum}\r\nOK\r\n`;
    // Split in the middle of the payload, right after its "OK".
    modem.script({ on: 'AT+SBDRB\r', reply: [answer.slice(0, answer.indexOf('OK') + 2), answer.slice(answer.indexOf('OK') + 2)] });
    const r = await session.run('AT+SBDRB', { binary: true });
    const label = echo ? 'echo on' : 'echo off';
    assert.ok(r.ok, label);
    assert.equal(r.binary, { payload: wire(payload), checksum: 0xc8, checksumOk: true }, label);
    assert.equal(r.info, [], label);
  }
});

test('Iridium binary read with a wrong checksum: ok (the modem said OK), checksumOk false', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT+SBDRB\r', reply: '\x00\x05hello\x02\x15\r\nOK\r\n' });
  const r = await session.run('AT+SBDRB', { binary: true });
  assert.equal({ ok: r.ok, checksumOk: r.binary?.checksumOk, checksum: r.binary?.checksum }, { ok: true, checksumOk: false, checksum: 0x0215 });
});

test('Iridium binary write: AT+SBDWB=5, READY, bytes and checksum, status 0 and OK', async () => {
  const { modem, session } = setup();
  const data = Uint8Array.of(...wire('hello'), 0x02, 0x14); // iridium-sbd.md 3.2
  modem.script({ on: 'AT+SBDWB=5\r', reply: 'READY\r\n' }, { on: 'hello\x02\x14', reply: '\r\n0\r\n\r\nOK\r\n' });
  const r = await session.run('AT+SBDWB=5', { promptData: data, timeoutMs: 70_000 });
  assert.equal(modem.writes, ['AT+SBDWB=5\r', 'hello\x02\x14']);
  assert.equal({ ok: r.ok, info: r.info, prompted: r.prompted }, { ok: true, info: ['0'], prompted: true });
});

test('Iridium binary write: status 1 comes without OK; endOn ends the command on it', async () => {
  const { modem, session } = setup();
  const data = Uint8Array.of(...wire('hello'), 0x02, 0x14);
  modem.script(
    { on: 'AT+SBDWB=5\r', reply: 'READY\r\n' },
    { on: 'hello\x02\x14', reply: '\r\n1\r\n' },
    { on: 'AT+SBDD0\r', reply: '\r\n0\r\n\r\nOK\r\n' },
  );
  const r = await session.run('AT+SBDWB=5', { promptData: data, timeoutMs: 70_000, endOn: (line) => line === '1' });
  assert.equal({ ok: r.ok, final: r.final, info: r.info }, { ok: true, final: null, info: ['1'] });
  const d0 = await session.run('AT+SBDD0');
  assert.equal({ ok: d0.ok, info: d0.info }, { ok: true, info: ['0'] });
});

test('a timeout in the middle of a binary read drops it; the next answer reads cleanly', async () => {
  const { clock, modem, session } = setup({ settleMs: 0 });
  modem.script({ on: 'AT+SBDRB\r', reply: '\x00\x05hel' });
  const p = session.run('AT+SBDRB', { binary: true });
  await settle();
  clock.advance(5_000);
  const r = await p;
  assert.equal({ error: r.error, binary: r.binary }, { error: 'TIMEOUT', binary: undefined });
  assert.is(session.stats().decoder.discardedPartial, 1);
  modem.script({ on: 'AT+CSQF\r', reply: '\r\n+CSQF:4\r\n\r\nOK\r\n' });
  assert.equal((await session.run('AT+CSQF')).info, ['+CSQF:4']);
});

test('a URC cut in half by a timeout still reaches its handler', async () => {
  const { clock, modem, session } = setup();
  const heard: string[] = [];
  session.onUrc('+CMTI', (u) => void heard.push(u.line));
  modem.script({ on: 'AT+CSQ\r', reply: '\r\n+CMTI: "SM' });
  const p = session.run('AT+CSQ');
  await settle();
  clock.advance(5_000);
  assert.is((await p).error, 'TIMEOUT');
  modem.send('",3\r\n');
  await settle();
  assert.equal(heard, ['+CMTI: "SM",3']);
});

test('Iridium text write with echo on: AT+SBDWT, READY, text and CR; the echoed text is dropped', async () => {
  const { modem, session } = setup();
  modem.script({ on: 'AT+SBDWT\r', reply: 'AT+SBDWT\rREADY\r\n' }, { on: 'hello\r', reply: 'hello\r\n\r\n0\r\n\r\nOK\r\n' });
  const r = await session.run('AT+SBDWT', { promptData: wire('hello\r'), timeoutMs: 70_000 });
  assert.equal({ ok: r.ok, info: r.info }, { ok: true, info: ['0'] });
  assert.is(session.stats().echoes, 2);
});

test('bad arguments throw at once: control characters, a zero timeout, bad session options', () => {
  const { session } = setup();
  assert.throws(() => session.run('AT\rAT'), RangeError);
  assert.throws(() => session.run(''), RangeError);
  assert.throws(() => session.run('AT', { timeoutMs: 0 }), RangeError);
  assert.throws(() => setup({ unresponsiveAfter: 0 }), RangeError);
  assert.is(session.stats().commands, 0);
});

test.run();
