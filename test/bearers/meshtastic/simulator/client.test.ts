import { parseArgs } from 'node:util';
import { crc32 } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MeshDevice, Protobuf, Types } from '@meshtastic/core';
import { TransportNode } from '@meshtastic/transport-node';
import type { InboundFrame, NodeReport } from '../../../../src/bearers/bearer.ts';
import type { SimValues } from '../../../../src/bearers/driver-module.ts';
import { MeshtasticBearer } from '../../../../src/bearers/meshtastic/driver.ts';
import { meshtasticSimulator } from '../../../../src/bearers/meshtastic/simulator/cli.ts';
import { openTcpLink } from '../../../../src/bearers/shared/links/tcp-link.ts';
import { systemClock } from '../../../../src/lib/clock.ts';
import { createLogger } from '../../../../src/lib/log.ts';
import { bearerContext } from '../../../helpers/bearer-context.ts';
import { waitFor } from './helpers.ts';

// The independent check of the Meshtastic simulator: the official Meshtastic JavaScript client,
// @meshtastic/core 2.6.7 with its Node TCP transport @meshtastic/transport-node 0.0.2 (npm,
// GPL-3.0, used by this test only), connects to `fieldbridge sim meshtastic` over TCP as an app
// connects to a WiFi board, completes its configuration handshake through its own protobuf
// decoding, reads the node database, and exchanges texts with the bridge's driver, which is
// connected over TCP to the other simulated node of the same mesh. Where the client and the
// simulator disagree, the simulator is wrong until shown otherwise
// (docs/protocols/meshtastic.md, "The official client as a check").
//
// Each firmware the simulator offers runs the same test: the modes come from its own options,
// so a simulator with `--firmware` runs it once per version.

const FIRMWARES: Array<string | null> = 'firmware' in meshtasticSimulator.options ? ['2.7', '2.8'] : [null];
const firmwareArgs = (fw: string | null) => (fw === null ? [] : ['--firmware', fw]);

const parse = (args: string[]): SimValues => parseArgs({ args, options: meshtasticSimulator.options, strict: true }).values as SimValues;
const hostPort = (device: string) => {
  const m = /^tcp:\/\/([^:]+):(\d+)$/.exec(device);
  if (!m) throw new Error(`not a tcp device: ${device}`);
  return { host: m[1], port: Number(m[2]) };
};
const nodeId = (num: number) => `!${num.toString(16).padStart(8, '0')}`;

function withTimeout<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`@meshtastic/core: timed out waiting for ${what}`)), ms))),
  ]);
}

// The parts of the client's messages this test reads. Its type declarations name packages
// it bundles into its JavaScript (its protobufs, its event dispatcher), so they do not resolve
// here and the handlers' parameters are typed by hand.
interface ClientNode { num: number; user?: { id: string; longName: string; shortName: string; publicKey: Uint8Array } }
interface ClientText { id: number; from: number; to: number; type: 'direct' | 'broadcast'; channel: number; rxTime: Date; data: string }

/** What the client saw, by its own events. */
interface ClientView {
  myNodeNum: number | null;
  nodes: Map<number, ClientNode>;
  firmware: string | null;
  channelRoles: number[];
  configs: string[];
  texts: ClientText[];
}

async function connectClient(device: string): Promise<{ client: MeshDevice; view: ClientView }> {
  const { host, port } = hostPort(device);
  const client = new MeshDevice(await TransportNode.create(host, port, 10_000));
  // The client's own logging is not this test's business (tslog: 5 = error and above).
  client.log.settings.minLevel = 5;
  // Its queue waits 60 s for an answer that want_config_id never gets (it then resolves);
  // a shorter wait lets the test process end when the test does.
  (client.queue as unknown as { timeout: number }).timeout = 3000;
  const view: ClientView = { myNodeNum: null, nodes: new Map(), firmware: null, channelRoles: [], configs: [], texts: [] };
  const on = client.events;
  on.onMyNodeInfo.subscribe((m: { myNodeNum: number }) => (view.myNodeNum = m.myNodeNum));
  on.onNodeInfoPacket.subscribe((n: ClientNode) => view.nodes.set(n.num, n));
  on.onDeviceMetadataPacket.subscribe((m: { data: { firmwareVersion: string } }) => (view.firmware = m.data.firmwareVersion));
  on.onChannelPacket.subscribe((c: { role: number }) => view.channelRoles.push(c.role));
  on.onConfigPacket.subscribe((c: { payloadVariant: { case?: string } }) => view.configs.push(String(c.payloadVariant.case)));
  on.onMessagePacket.subscribe((m: ClientText) => view.texts.push(m));
  const configured = new Promise<void>((resolve) =>
    on.onDeviceStatus.subscribe((s: Types.DeviceStatusEnum) => s === Types.DeviceStatusEnum.DeviceConfigured && resolve()),
  );
  void client.configure().catch(() => {});
  await withTimeout(configured, 'the configuration handshake');
  return { client, view };
}

function tcpBridge(device: string) {
  const heard: InboundFrame[] = [];
  const nodes: NodeReport[] = [];
  const { host, port } = hostPort(device);
  const bearer = new MeshtasticBearer(
    bearerContext({
      interfaceId: 'ifc_mt_client', interfaceName: 'mt-client', settings: { handshake_timeout_s: 3, ack_timeout_s: 5 }, clock: systemClock,
      log: createLogger({ level: 'error', format: 'json', write: () => {} }),
      events: { receive: (f) => void heard.push(f), state: () => {}, nodes: (n) => void nodes.push(...n) },
    }),
    { openLink: () => openTcpLink(host, port) },
  );
  return { bearer, heard, nodes };
}

for (const firmware of FIRMWARES) {
  const name = firmware === null ? 'the default firmware' : `firmware ${firmware}`;
  test(`@meshtastic/core over TCP (${name}): handshake, node database, a text each way with the bridge`, async () => {
    const keepAlive = setInterval(() => {}, 1000);
    const abort = new AbortController();
    let devices: string[] = [];
    const lines: string[] = [];
    const running = meshtasticSimulator.run(parse(['--tcp', '127.0.0.1:0', '--tcp', '127.0.0.1:0', '--node-name', 'Field', ...firmwareArgs(firmware)]), {
      signal: abort.signal, write: (l) => lines.push(l), onReady: (d) => (devices = d),
    });
    let client: MeshDevice | null = null;
    const bridge = tcpBridge('tcp://127.0.0.1:1');
    try {
      await waitFor('the simulator listening', () => devices.length === 2, 5000);
      const b = tcpBridge(devices[1]);
      Object.assign(bridge, b);
      await bridge.bearer.start(devices[1]);
      await waitFor('the bridge online', () => bridge.bearer.phase === 'online', 8000);
      const bridgeId = String(bridge.bearer.stats().node_id);

      const { client: c, view } = await connectClient(devices[0]);
      client = c;
      // The handshake as the client read it: its own node, the board's firmware, 8 channel
      // slots with the primary first, the config sections, and the mesh's other node.
      assert.ok(view.myNodeNum !== null && view.myNodeNum > 3, `my_node_num ${view.myNodeNum}`);
      const me = view.nodes.get(view.myNodeNum!);
      assert.ok(me, 'the own node is in the node database');
      assert.is(me.user?.longName, 'Field 1');
      assert.is(me.user?.id, nodeId(view.myNodeNum!));
      assert.ok(view.firmware && /^2\.\d+\.\d+/.test(view.firmware), `firmware ${view.firmware}`);
      assert.equal(view.channelRoles, [Protobuf.Channel.Channel_Role.PRIMARY, ...Array(7).fill(Protobuf.Channel.Channel_Role.DISABLED)]);
      for (const section of ['device', 'position', 'lora', 'security']) assert.ok(view.configs.includes(section), `config ${section}: ${view.configs.join()}`);
      const gate = [...view.nodes.values()].find((n) => nodeId(n.num) === bridgeId);
      assert.ok(gate, `the bridge's board ${bridgeId} is in the client's node database: ${[...view.nodes.keys()].map(nodeId).join()}`);
      assert.is(gate.user?.longName, 'Field 2');
      assert.is(gate.user?.id, bridgeId);
      if (firmware === '2.8') {
        // Firmware 2.8 numbers a node by the CRC-32 of its public key (docs/protocols/meshtastic.md
        // 2.10): checked on what the client decoded.
        for (const n of [me, gate]) {
          assert.is(n.user?.publicKey.length, 32, `the public key of ${nodeId(n.num)}`);
          assert.is(crc32(n.user!.publicKey) >>> 0, n.num);
        }
      }

      // The client to the bridge: acknowledged (the promise resolves on the routing answer),
      // stored by the bridge as from the client's node.
      const sentId = await withTimeout(client.sendText('to the bridge ✓', gate.num, true), 'the ack of the text to the bridge');
      assert.ok(sentId > 0);
      await waitFor('the bridge hears it', () => bridge.heard.some((f) => f.text === 'to the bridge ✓'), 5000);
      const got = bridge.heard.find((f) => f.text === 'to the bridge ✓')!;
      assert.is(got.from, nodeId(view.myNodeNum!));
      assert.is(got.to, bridgeId);
      assert.is(got.meta?.packet_id, sentId);

      // A broadcast on the primary channel reaches the bridge as "everyone".
      // Without want_ack nothing answers it: the client's promise ends on its own timeout.
      void client.sendText('hello all', 'broadcast', false).catch(() => {});
      await waitFor('the bridge hears the broadcast', () => bridge.heard.some((f) => f.text === 'hello all'), 5000);
      assert.is(bridge.heard.find((f) => f.text === 'hello all')!.to, '^all');

      // The bridge to the client: acknowledged by the client's board, read by the client.
      const result = await bridge.bearer.send({
        deliveryId: 'dlv_client_1', messageId: 'msg_client_1', to: nodeId(view.myNodeNum!), channel: null, kind: 'text', text: 'from the bridge',
        payload: new TextEncoder().encode('from the bridge'),
      });
      assert.is(result.ok, true, JSON.stringify(result));
      await waitFor('the client reads it', () => view.texts.some((t) => t.data === 'from the bridge'), 5000);
      const text = view.texts.find((t) => t.data === 'from the bridge')!;
      assert.is(nodeId(text.from), bridgeId);
      assert.is(text.to, view.myNodeNum);
      assert.is(text.type, 'direct');
      assert.ok(text.rxTime.getTime() > 0, 'the board stamped the arrival');
    } finally {
      await client?.disconnect().catch(() => {});
      await bridge.bearer.stop();
      abort.abort();
      assert.is(await running, 0, lines.join('\n'));
      clearInterval(keepAlive);
    }
  });
}

test.run();
