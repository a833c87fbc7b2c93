import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rnodeProbe } from '../../../src/bearers/rnode/probe.ts';
import { serveRNodeTcp } from '../../../src/bearers/rnode/simulator/serve.ts';
import { RNodeSimulator } from '../../../src/bearers/rnode/simulator/simulator.ts';
import { openTestLink, settle } from './helpers.ts';

test('probe: an RNode answers the detect request; a mute device never does; a wrong byte is false', async () => {
  const sim = new RNodeSimulator();
  const t = await serveRNodeTcp(sim, { port: 0 });
  let link = await openTestLink(t.device);
  assert.is(await rnodeProbe(link), true);
  await link.close();

  sim.faults.mute = true;
  link = await openTestLink(t.device);
  let answered: boolean | null = null;
  void rnodeProbe(link).then((v) => (answered = v));
  await settle(100);
  assert.is(answered, null);
  await link.close();

  sim.faults.mute = false;
  link = await openTestLink(t.device);
  sim.on('host-frame', () => sim.sendGarbage(Uint8Array.of(0xc0, 0x08, 0x00, 0xc0)));
  sim.faults.mute = true; // only the injected wrong answer goes out
  assert.is(await rnodeProbe(link), false);
  await link.close();
  await t.close();
  sim.close();
});

test.run();
