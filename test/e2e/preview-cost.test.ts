import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { iridiumSimGateway } from '../../src/bearers/iridium/simulator/link.ts';
import { smsSimNetwork } from '../../src/bearers/sms/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';
import { createIridiumInterface } from '../helpers/iridium.ts';
import { createRule } from '../helpers/routing.ts';
import { createSmsInterface, keepProcessAlive, waitDelivery, waitOnline, waitUntil } from '../helpers/sms.ts';

// Preview and cost view against the real drivers (issue 17): an SMS modem and an Iridium modem,
// simulated on sim://. For each text the preview's SMS parts and Iridium credits are exactly
// what the drivers then send and bill (the SMS network counts the parts the modem submitted;
// the Iridium delivery's result carries the credits the session cost), and
// GET /api/messages/stats `usage` adds them up.

const CHANNEL = `preview-cost-${process.pid}`;
const network = smsSimNetwork(`${CHANNEL}-sms`);
iridiumSimGateway(`${CHANNEL}-sat`);
let submitted = 0;
network.on('submitted', () => submitted++);
let t: TestBridge;
let release: () => void;

test.before(async () => {
  release = keepProcessAlive();
  t = await startTestBridge();
  await createSmsInterface(t, 'sms-0', `sim://${CHANNEL}-sms`);
  await createIridiumInterface(t, 'sat-0', `sim://${CHANNEL}-sat`);
  await createRule(t.call, 'both', { match: { direction: 'outbound' }, action: 'forward', destinations: [{ interface: 'sms-0', to: '+4915112345678' }, { interface: 'sat-0', to: 'gateway' }] });
  await waitOnline(t, 'sms-0');
  await waitUntil('sat-0 online', async () => (await t.call('GET', '/api/interfaces/sat-0')).body.state.connected === true, 15_000);
});
test.after(async () => {
  await t?.stop();
  release?.();
});

const TEXTS = [
  'short GSM-7 text',
  `${'x'.repeat(300)}`, // 300 septets: 2 parts; 300 bytes: 6 credits
  'ж'.repeat(100), // UCS-2: 2 parts of at most 67; 200 bytes: 4 credits
  `curly {braces} and € count double ${'y'.repeat(130)}`, // extension characters
];

test('the preview\'s parts and credits are what the drivers send and bill; stats add them up', async () => {
  let parts = 0;
  let credits = 0;
  for (const text of TEXTS) {
    const preview = await t.call('POST', '/api/messages/preview', { body: { mode: 'send', to: 'ops', text } });
    assert.is(preview.status, 200, preview.text);
    const [sms, sat] = preview.body.parts[0].deliveries;
    assert.equal([sms.state, sat.state], ['connected', 'connected']);
    assert.ok(sms.fits_mtu && sat.fits_mtu && sms.budget.allows && sat.budget.allows, preview.text);
    const before = submitted;
    const sent = await t.call('POST', '/api/messages/send', { body: { to: 'ops', text } });
    assert.is(sent.status, 202, sent.text);
    const [dSms, dSat] = sent.body.deliveries;
    const doneSms = await waitDelivery(t, dSms.id, 'delivered', (d) => d.state === 'delivered');
    const doneSat = await waitDelivery(t, dSat.id, 'delivered', (d) => d.state === 'delivered');
    assert.is(doneSms.result.parts, sms.frames[0].parts, `SMS parts of ${JSON.stringify(text)}`);
    assert.is(doneSms.result.encoding, sms.frames[0].encoding);
    assert.is(submitted - before, sms.cost.amount, 'the modem submitted as many parts as previewed');
    assert.is(doneSat.result.credits, sat.cost.amount, `credits of ${JSON.stringify(text)}`);
    parts += sms.cost.amount;
    credits += sat.cost.amount;
  }
  const usage = (await t.call('GET', '/api/messages/stats')).body.usage;
  const row = (name: string) => usage.find((u: any) => u.interface === name);
  assert.equal([row('sms-0').deliveries, row('sms-0').sms_parts], [TEXTS.length, parts]);
  assert.equal([row('sat-0').deliveries, row('sat-0').iridium_credits], [TEXTS.length, credits]);
  assert.is(row('sat-0').bytes, TEXTS.reduce((n, x) => n + Buffer.byteLength(x), 0));
  const metrics = (await t.call('GET', '/metrics')).text;
  assert.match(metrics, new RegExp(`fieldbridge_sms_parts_total\\{interface="sms-0",[^}]*\\} ${parts}\\n`));
  assert.match(metrics, new RegExp(`fieldbridge_iridium_credits_total\\{interface="sat-0",[^}]*\\} ${credits}\\n`));
});

test.run();
