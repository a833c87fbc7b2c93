import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AprsIsStandIn } from '../../src/bearers/aprs/simulator/aprs-is-server.ts';
import { aprsSimChannel } from '../../src/bearers/aprs/simulator/link.ts';
import { meshtasticSimMesh } from '../../src/bearers/meshtastic/simulator/link.ts';
import { startTestBridge, type TestBridge } from '../helpers/bridge.ts';

// APRS end to end: one bridge with a simulated Meshtastic mesh and a simulated APRS channel
// (sim://). A mesh node's text reaches an APRS station through one rule as an APRS message,
// is delivered on the station's ack, and the station's reply comes back to the mesh node by
// another rule. Without a callsign the interface transmits nothing and its health says why.

const aprsChannel = `aprs-${process.pid}`;
const mtChannel = `mt-aprs-${process.pid}`;
let t: TestBridge;

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const healthOf = async (name: string) => (await t.call('GET', '/api/interfaces/health')).body.items.find((i: { name: string }) => i.name === name);

async function rule(body: Record<string, unknown>): Promise<void> {
  const r = await t.call('POST', '/api/access-rules', { body: { schedule: null, action: 'forward', ...body } });
  assert.is(r.status, 201, r.text);
}

test.before(async () => {
  t = await startTestBridge();
});

test.after(async () => {
  await t?.stop();
});

test('a Meshtastic DM reaches an APRS station as a message, is delivered on its ack, and the reply comes back to the node', async () => {
  const channel = aprsSimChannel(aprsChannel);
  const station = channel.addStation({ callsign: 'W1AW-7', reply: (text) => `roger: ${text}` });
  const far = meshtasticSimMesh(mtChannel).addRemoteNode({ num: 0x0badcafe, long_name: 'Trail crew', short_name: 'TRL' });
  const aprs = await t.call('POST', '/api/interfaces', { body: { name: 'aprs', kind: 'aprs', device: `sim://${aprsChannel}`, settings: { callsign: 'N0CALL-10', rf_min_gap_s: 0 } } });
  assert.is(aprs.status, 201, aprs.text);
  const mt = await t.call('POST', '/api/interfaces', { body: { name: 'mt', kind: 'meshtastic', device: `sim://${mtChannel}` } });
  assert.is(mt.status, 201, mt.text);
  await until('both online', async () => (await healthOf('aprs'))?.connected && (await healthOf('mt'))?.connected);
  // The operator's two rules: mesh text to the APRS station, the station's messages to the node.
  await rule({ name: 'mesh-to-aprs', match: { direction: 'inbound', interfaces: ['mt'] }, destinations: [{ interface: 'aprs', to: 'W1AW-7' }] });
  await rule({ name: 'aprs-to-mesh', match: { direction: 'inbound', interfaces: ['aprs'], from: ['W1AW-7'] }, destinations: [{ interface: 'mt', to: '!0badcafe' }] });

  far.sendText(0xffffffff, 'at the saddle, all well');
  await until('the APRS station to take it', () => station.inbox.length === 1);
  assert.equal(station.inbox[0], { from: 'N0CALL-10', text: 'at the saddle, all well', id: station.inbox[0].id });
  const delivery = await until('delivered on the ack', async () => {
    const r = await t.call('GET', '/api/deliveries?interface=aprs');
    const d = r.body.items.find((x: { state: string }) => x.state === 'delivered');
    return d;
  });
  assert.is(delivery.to, 'W1AW-7');
  assert.ok(channel.air.some((l) => l.startsWith('W1AW-7>') && l.endsWith(`:ack${station.inbox[0].id}`)), channel.air.join('\n'));
  await until('the reply to reach the node', () => far.received.some((p) => new TextDecoder().decode(p.decoded?.payload ?? new Uint8Array()) === 'roger: at the saddle, all well'));
  const stats = await t.call('GET', `/api/interfaces/${aprs.body.id}/stats`);
  assert.is(stats.status, 200, stats.text);
  assert.is(stats.body.stats.acks_received, 1);
  assert.is(stats.body.stats.acks_sent, 1);
});

test('without a callsign the interface transmits nothing, and its health says why', async () => {
  const channel = aprsSimChannel(`${aprsChannel}-rx`);
  channel.addStation({ callsign: 'W1AW-7' });
  const r = await t.call('POST', '/api/interfaces', { body: { name: 'aprs-rx', kind: 'aprs', device: `sim://${aprsChannel}-rx` } });
  assert.is(r.status, 201, r.text);
  const h = await until('listening', async () => {
    const x = await healthOf('aprs-rx');
    return x?.connected && x;
  });
  assert.match(JSON.stringify(h), /ERR_APRS_NO_CALLSIGN: no callsign is set: the interface listens and transmits nothing/);
  await rule({ name: 'out-to-aprs-rx', match: { direction: 'outbound' }, destinations: [{ interface: 'aprs-rx', to: '{to}' }] });
  const sent = await t.call('POST', '/api/messages/send', { body: { to: 'W1AW-7', text: 'hello' } });
  assert.is(sent.status, 202, sent.text);
  const id = sent.body.deliveries[0].id;
  const d = await until('dead', async () => {
    const x = await t.call('GET', `/api/deliveries/${id}`);
    return x.body.state === 'dead' && x.body;
  });
  assert.match(d.last_error, /ERR_APRS_NO_CALLSIGN: no callsign is set, so nothing is transmitted/);
  assert.equal(channel.air, [], 'nothing on the air');
});

test('the APRS-IS passcode is a secret: the API shows it redacted, the server gets it, the logs never do', async () => {
  const server = new AprsIsStandIn();
  const port = await server.listen(0);
  try {
    const r = await t.call('POST', '/api/interfaces', { body: { name: 'aprs-is', kind: 'aprs', device: 'auto', settings: { callsign: 'N0CALL-10', aprs_is_server: `127.0.0.1:${port}`, aprs_is_passcode: '13023' } } });
    assert.is(r.status, 201, r.text);
    assert.is(r.body.settings.aprs_is_passcode, '<redacted>');
    const got = await t.call('GET', `/api/interfaces/${r.body.id}`);
    assert.is(got.body.settings.aprs_is_passcode, '<redacted>');
    await until('verified login', () => server.logins.some((l) => l.verified && l.passcode === '13023'));
    await until('health online', async () => (await healthOf('aprs-is'))?.connected);
    assert.not.ok(t.logs.some((l) => l.includes('13023')), 'no log line holds the passcode');
  } finally {
    await server.close();
  }
});

test.run();
