import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RNodeBearer } from '../../../../src/bearers/rnode/driver.ts';
import { openRNodeSimLink, type RNodeSimLink } from '../../../../src/bearers/rnode/simulator/link.ts';
import { systemClock } from '../../../../src/lib/clock.ts';
import { recorder, waitFor } from '../helpers.ts';

test('sim://<channel>: two RNode interfaces on one in-process channel exchange a frame', async () => {
  const links: RNodeSimLink[] = [];
  const open = async (device: string) => {
    const link = await openRNodeSimLink(device.replace('sim://', ''));
    links.push(link);
    return link;
  };
  const a = recorder({ preset: 'au-915' }, systemClock, 'a');
  const b = recorder({ preset: 'au-915' }, systemClock, 'b');
  const other = recorder({ preset: 'au-915' }, systemClock, 'other');
  const ba = new RNodeBearer(a.ctx, { openLink: open });
  const bb = new RNodeBearer(b.ctx, { openLink: open });
  const bo = new RNodeBearer(other.ctx, { openLink: open });
  await ba.start('sim://lab');
  await bb.start('sim://lab');
  await bo.start('sim://elsewhere');
  await waitFor('online', () => [ba, bb, bo].every((x) => x.phase === 'online'));
  assert.equal(links[0].sim.config.frequency_hz, 915_000_000);
  const text = 'over the simulated air';
  assert.equal(await ba.send({ deliveryId: 'd', messageId: 'm', to: 'broadcast', channel: null, kind: 'text', text, payload: new TextEncoder().encode(text) }), { ok: true });
  await waitFor('received', () => b.received.length === 1);
  assert.is(b.received[0].text, text);
  assert.type(b.received[0].meta.rssi_dbm, 'number');
  assert.type(b.received[0].meta.snr_db, 'number');
  await new Promise((r) => setTimeout(r, 50));
  assert.is(other.received.length, 0, 'another channel hears nothing');
  await ba.stop();
  await bb.stop();
  await bo.stop();
  assert.is(links[0].sim.counters.leaves, 1);
  await assert.not.throws(async () => links[0].close());
});

test.run();
