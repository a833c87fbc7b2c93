import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LinkEvents } from '../../../../src/bearers/shared/links/link-events.ts';
import { SharedLink } from '../../../../src/bearers/shared/links/link-share.ts';
import type { Link } from '../../../../src/bearers/shared/links/link.ts';

test('bytes before the first listener wait for it, up to 64 KiB, the newest kept', () => {
  const events = new LinkEvents();
  for (let i = 0; i < 80; i++) events.emitData(new Uint8Array(1024).fill(i));
  const heard: number[] = [];
  events.onData((c) => heard.push(c[0], c.length));
  assert.is(heard.length / 2, 64);
  assert.is(heard[0], 16, 'the oldest chunks were dropped');
  assert.is(heard[heard.length - 2], 79);
  const later: number[] = [];
  events.onData((c) => later.push(...c));
  events.emitData(Uint8Array.from([1]));
  assert.equal(later, [1], 'a second listener gets only what comes after');
});

test('close is reported once, to listeners before and after it, and data stops', async () => {
  const events = new LinkEvents();
  const reasons: string[] = [];
  const heard: number[] = [];
  events.onData((c) => heard.push(...c));
  events.onClose((r) => reasons.push(`a:${r}`));
  events.emitClose('unplugged');
  events.emitClose('again');
  events.emitData(Uint8Array.from([1]));
  events.onClose((r) => reasons.push(`b:${r}`));
  await Promise.resolve();
  assert.equal(reasons, ['a:unplugged', 'b:unplugged']);
  assert.equal(heard, []);
  assert.is(events.closedError('/dev/x').code, 'ERR_LINK_CLOSED');
});

test('a throwing listener is reported, never rethrown', () => {
  const reported: unknown[] = [];
  const events = new LinkEvents((e) => reported.push(e));
  events.onData(() => {
    throw new Error('bug');
  });
  events.onClose(() => {
    throw new Error('bug on close');
  });
  events.emitData(Uint8Array.from([1]));
  events.emitClose('x');
  assert.is(reported.length, 2);
});

function innerLink() {
  const events = new LinkEvents();
  const written: number[] = [];
  const link: Link = {
    kind: 'serial',
    description: '/dev/test',
    write: async (d) => void written.push(...d),
    onData: (l) => events.onData(l),
    onClose: (l) => events.onClose(l),
    close: async () => events.emitClose('closed by the bridge'),
  };
  return { link, events, written };
}

test('a shared link drops bytes while muted, and a view handed on hears nothing more', async () => {
  const { link, events, written } = innerLink();
  const shared = new SharedLink(link);
  shared.mute();
  events.emitData(Uint8Array.from([0xaa])); // boot chatter
  const probe = shared.view(false);
  const probeHeard: number[] = [];
  probe.onData((c) => probeHeard.push(...c));
  events.emitData(Uint8Array.from([1]));
  await probe.write(Uint8Array.from([9]));
  await probe.close(); // hands the link back without closing it
  const driver = shared.view();
  const driverHeard: number[] = [];
  driver.onData((c) => driverHeard.push(...c));
  events.emitData(Uint8Array.from([2]));
  assert.equal(probeHeard, [1]);
  assert.equal(driverHeard, [2]);
  assert.equal(written, [9]);
  const reasons: string[] = [];
  driver.onClose((r) => reasons.push(r));
  await driver.close();
  assert.equal(reasons, ['closed by the bridge']);
  assert.is(shared.closedReason, 'closed by the bridge');
  const late = shared.view();
  const lateReasons: string[] = [];
  late.onClose((r) => lateReasons.push(r));
  await Promise.resolve();
  assert.equal(lateReasons, ['closed by the bridge'], 'a view taken after the close is closed');
});

test.run();
