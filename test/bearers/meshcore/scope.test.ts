import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OutboundFrame, SendResult } from '../../../src/bearers/bearer.ts';
import { hex, regionKey } from '../../../src/bearers/meshcore/codec/index.ts';
import { MeshCoreBearer } from '../../../src/bearers/meshcore/driver.ts';
import { MeshCoreSettings } from '../../../src/bearers/meshcore/settings.ts';
import { meshcoreStats } from '../../../src/bearers/meshcore/stats.ts';
import { MeshCoreDevice, type MeshCoreDeviceOptions } from '../../../src/bearers/meshcore/simulator/device.ts';
import { meshcoreSimMesh, openMeshCoreSimLink, type MeshCoreSimLink } from '../../../src/bearers/meshcore/simulator/link.ts';
import { SimRepeater } from '../../../src/bearers/meshcore/simulator/repeater.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/log.ts';
import { bearerContext } from '../../helpers/bearer-context.ts';

// Flood scopes end to end (docs/meshcore.md "Flood scopes"; docs/protocols/meshcore.md 6.12):
// two bridge interfaces on one site of the simulated mesh, a peer on another, and between them
// a repeater that allows floods only in the region "de-by" and drops unscoped ones (`region
// denyf *`). The interface with `flood_scope: "de-by"` reaches the peer; the one without does
// not, unless a delivery names the scope after '#'. Older firmware gets the scope as well as it
// can take it, or an error that says why not.

let keepAlive: ReturnType<typeof setInterval>;
test.before(() => void (keepAlive = setInterval(() => {}, 1000)));
test.after(() => clearInterval(keepAlive));

const DE_BY = { name: 'de-by', key: regionKey('de-by') };

interface Radio {
  bearer: MeshCoreBearer;
  links: MeshCoreSimLink[];
  logs: string[];
}

function radio(name: string, settings: Record<string, unknown>, device: Omit<MeshCoreDeviceOptions, 'mesh' | 'name'>): Radio {
  const r: Radio = { links: [], logs: [] } as unknown as Radio;
  r.bearer = new MeshCoreBearer(
    bearerContext({
      interfaceId: `ifc_${name}`, interfaceName: name, settings: { command_timeout_s: 1, ack_timeout_max_s: 1, ...settings }, clock: systemClock,
      log: createLogger({ level: 'debug', format: 'json', write: (l) => r.logs.push(l) }),
      events: { receive: () => {}, state: () => {} },
    }),
    {
      openLink: async (d) => {
        const link = await openMeshCoreSimLink(d.slice('sim://'.length), { name, ...device });
        r.links.push(link);
        return link;
      },
      timing: { backoffInitialMs: 30, backoffMaxMs: 200 },
    },
  );
  return r;
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));

let worlds = 0;
/** A mesh with the repeater and the peer (south, in "de-by"), and bridge radios (north). */
async function world(radios: Record<string, [Record<string, unknown>, Omit<MeshCoreDeviceOptions, 'mesh' | 'name'>?]>) {
  const channel = `mc-scope-${process.pid}-${++worlds}`;
  const mesh = meshcoreSimMesh(channel);
  const repeater = new SimRepeater({ name: 'gw', sites: ['north', 'south'], allow: ['de-by'], denyUnscoped: true });
  mesh.addRepeater(repeater);
  const peer = new MeshCoreDevice({ name: `peer${worlds}`, mesh, site: 'south', defaultFloodScope: DE_BY });
  const heard: string[] = [];
  peer.on('received-channel', (r: { text: string }) => heard.push(r.text));
  peer.on('received', (r: { text: string }) => heard.push(r.text));
  const out: Record<string, Radio> = {};
  for (const [name, [settings, device]] of Object.entries(radios)) {
    out[name] = radio(`${name}${worlds}`, settings, { site: 'north', ...device });
    await out[name].bearer.start(`sim://${channel}`);
  }
  await waitFor('all online', () => Object.values(out).every((r) => r.bearer.phase === 'online'));
  return {
    ...out, peer, heard, repeater, peerAddress: hex(peer.publicKey.subarray(0, 6)),
    stop: async () => {
      for (const r of Object.values(out)) await r.bearer.stop();
      peer.close();
    },
  };
}

let n = 0;
const frame = (to: string, text: string): OutboundFrame => ({
  deliveryId: `dlv_scope_${++n}`, messageId: `msg_${n}`, to, channel: null, kind: 'text', text, payload: new TextEncoder().encode(text),
});
const errorOf = (r: SendResult) => (r.ok ? '' : r.error);

test('a message with the interface\'s flood scope passes a repeater that drops the unscoped one; the radio reports the scope it was given', async () => {
  const w = await world({ scoped: [{ flood_scope: 'de-by' }], plain: [{}] });
  const { scoped, plain } = w as unknown as Record<string, Radio>;
  try {
    assert.equal((await scoped.bearer.send(frame('broadcast', 'in de-by'))).ok, true);
    assert.equal((await plain.bearer.send(frame('broadcast', 'no scope'))).ok, true, 'the radio took it: a channel message has no ack');
    await waitFor('the peer hears the scoped one', () => w.heard.length === 1);
    await settle();
    assert.equal(w.heard, [`${scoped.links[0].device.name}: in de-by`]);
    assert.ok(w.repeater.counters.droppedUnscoped >= 1, JSON.stringify(w.repeater.counters));

    // Direct texts flood to a contact without a path: the scoped one is acknowledged (the
    // peer's ack floods back in its own scope "de-by"), the unscoped one never arrives.
    const direct = await scoped.bearer.send(frame(w.peerAddress, 'direct in de-by'));
    assert.is(direct.ok, true, JSON.stringify(direct));
    const lost = await plain.bearer.send(frame(w.peerAddress, 'direct without'));
    assert.match(errorOf(lost), /^ERR_MESHCORE_NO_ACK/);
    assert.ok(!w.heard.includes('direct without'));

    // The radio holds the scope it was given, and says so when asked (read back at the start).
    assert.equal(scoped.links[0].device.scope.default, DE_BY);
    const stats = scoped.bearer.stats();
    assert.equal(
      [stats.flood_scope, stats.flood_scope_support, stats.radio_flood_scope, stats.radio_flood_scope_key, stats.flood_scope_problem],
      ['de-by', 'default', 'de-by', 'a2213d1e459c16bcebe2658142ad89de', null],
    );
    const view = meshcoreStats.read(stats, {});
    assert.ok(meshcoreStats.schema.safeParse(view).success);
    assert.is(view.radio_flood_scope, 'de-by');
    assert.equal([plain.bearer.stats().flood_scope, plain.bearer.stats().radio_flood_scope], [null, null]);
  } finally {
    await w.stop();
  }
});

test('a delivery names its scope after \'#\': that send goes out in it, the next in the interface\'s again', async () => {
  const w = await world({ plain: [{}] });
  const { plain } = w as unknown as Record<string, Radio>;
  try {
    const r = await plain.bearer.send(frame('broadcast#de-by', 'scoped by the delivery'));
    assert.equal(r, { ok: true, meta: { channel: 0, acknowledged: false, flood_scope: 'de-by' } });
    const direct = await plain.bearer.send(frame(`${w.peerAddress}#de-by`, 'direct, scoped by the delivery'));
    assert.is(direct.ok && direct.meta?.flood_scope, 'de-by', JSON.stringify(direct));
    assert.equal((await plain.bearer.send(frame('broadcast', 'back to none'))).ok, true);
    await waitFor('the peer hears both scoped ones', () => w.heard.length === 2);
    await settle();
    assert.equal(w.heard.map((t) => t.replace(/^[^:]+: /, '')), ['scoped by the delivery', 'direct, scoped by the delivery']);
    assert.is(plain.links[0].device.scope.session, null, 'the scope of the one send was cleared again');
    const bad = await plain.bearer.send(frame('broadcast#a b', 'x'));
    assert.equal([bad.ok, !bad.ok && bad.retryable], [false, false]);
    assert.match(errorOf(bad), /^ERR_MESHCORE_SCOPE: "a b" after '#' is no flood scope/);
  } finally {
    await w.stop();
  }
});

test('`#*` sends one message unscoped (firmware 1.16, protocol 12+); 1.15 cannot while it has a default scope', async () => {
  const w = await world({ v13: [{ flood_scope: 'de-by' }], v11: [{ flood_scope: 'de-by' }, { firmwareVerCode: 11 }] });
  const { v13, v11 } = w as unknown as Record<string, Radio>;
  try {
    assert.equal((await v13.bearer.send(frame('broadcast#*', 'unscoped on purpose'))).ok, true);
    assert.equal((await v13.bearer.send(frame('broadcast', 'scoped again'))).ok, true);
    assert.is(v13.links[0].device.scope.unscoped, false, 'cleared for the next send');
    await waitFor('the scoped one', () => w.heard.length === 1);
    await settle();
    assert.equal(w.heard.map((t) => t.replace(/^[^:]+: /, '')), ['scoped again']);
    const refused = await v11.bearer.send(frame('broadcast#*', 'x'));
    assert.equal([refused.ok, !refused.ok && refused.retryable], [false, false]);
    assert.match(errorOf(refused), /^ERR_MESHCORE_SCOPE_UNSUPPORTED: .*companion 1\.16/);
  } finally {
    await w.stop();
  }
});

test('older firmware: 1.10-1.14 take the scope for the run; before 1.10 there is none, and the stats say so', async () => {
  const w = await world({ v10: [{ flood_scope: '#de-by' }, { firmwareVerCode: 10 }], v7: [{ flood_scope: 'de-by' }, { firmwareVerCode: 7 }] });
  const { v10, v7 } = w as unknown as Record<string, Radio>;
  try {
    assert.equal(v10.links[0].device.scope.session, DE_BY.key);
    assert.equal([v10.bearer.stats().flood_scope_support, v10.bearer.stats().radio_flood_scope], ['session', null]);
    assert.equal((await v10.bearer.send(frame('broadcast', 'from 1.14'))).ok, true);
    assert.equal((await v7.bearer.send(frame('broadcast', 'from 1.9'))).ok, true);
    await waitFor('the peer hears 1.14', () => w.heard.length === 1);
    await settle();
    assert.equal(w.heard.map((t) => t.replace(/^[^:]+: /, '')), ['from 1.14']);
    assert.is(v7.bearer.stats().flood_scope_support, 'none');
    assert.match(String(v7.bearer.stats().flood_scope_problem), /no flood scopes: MeshCore companion firmware 1\.10 or later/);
    assert.ok(v7.logs.some((l) => l.includes('meshcore.flood_scope_unsupported')));
    const named = await v7.bearer.send(frame('broadcast#de-by', 'x'));
    assert.equal([named.ok, !named.ok && named.retryable], [false, false]);
    assert.match(errorOf(named), /^ERR_MESHCORE_SCOPE_UNSUPPORTED/);
  } finally {
    await w.stop();
  }
});

test('at every start: a scope a previous host left for the run is cleared; the default is written only when it differs', async () => {
  const w = await world({ scoped: [{ flood_scope: 'de-by' }] });
  const { scoped } = w as unknown as Record<string, Radio>;
  try {
    const device = scoped.links[0].device;
    device.scope.session = regionKey('nl-ut');
    device.dropLink();
    await waitFor('online again', () => scoped.links.length === 2 && scoped.bearer.phase === 'online');
    assert.is(device.scope.session, null);
    assert.is(device.counters.commands.SET_DEFAULT_FLOOD_SCOPE, 1, 'written once, at the first start');
    assert.is(device.counters.commands.GET_DEFAULT_FLOOD_SCOPE, 3, 'read at each start, and back after the write');
  } finally {
    await w.stop();
  }
});

test('settings: a region name or *, a private region\'s key with its name; every bad field at once', () => {
  assert.equal(MeshCoreSettings.parse({ flood_scope: '#de-by' }).flood_scope, '#de-by');
  assert.ok(MeshCoreSettings.safeParse({ flood_scope: '*' }).success);
  assert.ok(MeshCoreSettings.safeParse({ flood_scope: '$club', flood_scope_key: '00112233445566778899aabbccddeeff' }).success);
  const bad = MeshCoreSettings.safeParse({ flood_scope: 'a b', flood_scope_key: 'xyz', channel: -1 });
  assert.is(bad.success, false);
  const paths = bad.error!.issues.map((i) => i.path.join('.')).sort();
  assert.equal(paths, ['channel', 'flood_scope', 'flood_scope_key']);
  const both = MeshCoreSettings.safeParse({ flood_scope: 'a b' });
  assert.match(both.error!.issues[0].message, /letters, digits/);
  assert.is(MeshCoreSettings.safeParse({ flood_scope: '$club' }).success, false, 'a private region needs its key');
  assert.is(MeshCoreSettings.safeParse({ flood_scope_key: '00112233445566778899aabbccddeeff' }).success, false, 'a key needs its name');
});

test.run();
