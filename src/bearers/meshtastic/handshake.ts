import type { NodeReport } from '../bearer.ts';
import type { DeviceSettings, ModuleVariant } from './admin.ts';
import { MODULE_VARIANTS } from './admin.ts';
import {
  type Channel, type DeviceMetadata, type FromRadio, fromRadioVariant, type LoRaRegionPresetMap, moduleConfigVariant, type MyNodeInfo, type NodeInfo,
} from './codec/messages.ts';
import { nodeInfoReport } from './inbound.ts';

// What the device tells in its handshake (docs/protocols/meshtastic.md 2.2): everything it
// sends after want_config_id until config_complete_id equals our nonce, in any order. Pure:
// the driver feeds it FromRadio messages and reads the result.

/** Reserved nonces: 69420 and 69421 change what the device sends, 1 makes it broadcast its
 *  NodeInfo (docs/protocols/meshtastic.md 2.7). */
const RESERVED_NONCES = new Set([0, 1, 69420, 69421]);

export function newNonce(random: () => number = Math.random): number {
  for (;;) {
    const n = Math.floor(random() * 0x1_0000_0000) >>> 0;
    if (!RESERVED_NONCES.has(n)) return n;
  }
}

export interface DeviceState extends DeviceSettings {
  myInfo?: MyNodeInfo;
  metadata?: DeviceMetadata;
  channels: Channel[];
  /** Other nodes from the device's node database (not the own node). */
  nodes: NodeReport[];
  ownNode?: NodeInfo;
  /** FromRadio.region_presets (2.8): which presets each region allows. */
  regionPresets?: LoRaRegionPresetMap;
  /** Every ModuleConfig variant the board listed, by name (2.8 lists four more than 2.7). */
  moduleConfigs?: string[];
}

export class Handshake {
  readonly nonce: number;
  readonly state: DeviceState = { channels: [], nodes: [], modules: {} };
  #complete = false;
  #infos: NodeInfo[] = [];

  constructor(nonce: number) {
    this.nonce = nonce;
  }

  get complete(): boolean {
    return this.#complete;
  }

  /** Takes one message of the handshake; true when it was the last one. */
  take(m: FromRadio): boolean {
    const s = this.state;
    switch (fromRadioVariant(m)) {
      case 'my_info':
        s.myInfo = m.my_info;
        break;
      case 'node_info':
        this.#infos.push(m.node_info!);
        break;
      case 'metadata':
        s.metadata = m.metadata;
        break;
      case 'region_presets':
        s.regionPresets = m.region_presets;
        break;
      case 'channel':
        s.channels.push(m.channel!);
        break;
      case 'config':
        if (m.config!.lora) s.lora = m.config!.lora;
        if (m.config!.position) s.position = m.config!.position;
        break;
      case 'moduleConfig':
        (s.moduleConfigs ??= []).push(moduleConfigVariant(m.moduleConfig!) ?? 'unknown');
        for (const v of MODULE_VARIANTS) {
          const value = m.moduleConfig![v];
          if (value) s.modules[v as ModuleVariant] = value as Record<string, unknown>;
        }
        break;
      case 'config_complete_id':
        // An answer to an earlier want_config_id (a probe, a retry) is not ours.
        if (m.config_complete_id === this.nonce) this.#finish();
        break;
      default:
        break;
    }
    return this.#complete;
  }

  #finish(): void {
    const own = this.state.myInfo?.my_node_num;
    for (const info of this.#infos) {
      if (own !== undefined && info.num === own) {
        this.state.ownNode = info;
        this.state.owner = info.user;
        continue;
      }
      const report = nodeInfoReport(info);
      if (report) this.state.nodes.push(report);
    }
    this.#complete = true;
  }
}
