import {
  type AdminMessage, adminVariant, type Config, configVariant, decodeAdminMessage, type DeviceMetadata, encodeAdminMessage, type LoRaConfig,
  type MeshPacket, moduleConfigVariant, REGION_CODE,
} from '../codec/messages.ts';
import { CHANNEL_SLOTS, CONFIG_KEYS, type DeviceState, LONG_NAME_MAX_BYTES, loraOf, MODULE_KEYS, SHORT_NAME_MAX_BYTES, utf8Length } from './state.ts';

// ADMIN_APP packets to the own node (admin.proto; docs/protocols/meshtastic.md 2.7, 2.8), as
// the firmware's AdminModule handles them for a local client (MeshPacket.from 0: no session
// passkey is checked):
// - get_* requests are answered only when Data.want_response is set, with a packet from the
//   own node to the own node whose Data.request_id is the request's id;
// - set_owner with a name longer than the nanopb limits fails to decode there: ignored;
// - set_config replaces the whole variant; a LoRa change that touches radio parameters
//   reboots, a hop_limit-only one does not (2.7.x); other set_config and set_module_config
//   reboot; inside begin_edit_settings nothing reboots until commit_edit_settings, which
//   always does.

/** What the device lends the admin handlers. */
export interface AdminHost {
  state(): DeviceState;
  readonly counters: { admin: Record<string, number>; adminIgnored: number };
  emit(event: 'admin' | 'owner' | 'config' | 'module-config', value: unknown): void;
  metadata(): DeviceMetadata;
  /** The long name as the firmware stores it (2.8 cuts it to 24 bytes). */
  clampLongName(name: string): string;
  /** AdminMessage.session_passkey the device puts in its answers. */
  passkey(): Uint8Array;
  /** Sends an ADMIN_APP answer (encoded AdminMessage) to the host. */
  reply(request: MeshPacket, payload: Uint8Array): void;
  editing(): boolean;
  setEditing(on: boolean): void;
  /** Default delay: the device's rebootDelayMs. */
  scheduleReboot(delayMs: number | undefined, reason: string): void;
  cancelReboot(): void;
}

interface AdminCall {
  host: AdminHost;
  /** Answers when the request had want_response set. */
  answer(message: AdminMessage): void;
  ignore(): void;
  /** Reboots now-ish unless an edit transaction is open (AdminModule saveChanges). */
  saved(reboot: boolean, reason: string): void;
}

type AdminHandler = (call: AdminCall, message: AdminMessage) => void;

export function handleAdmin(host: AdminHost, request: MeshPacket): void {
  const decoded = decodeAdminMessage(request.decoded?.payload ?? new Uint8Array(0));
  if (!decoded.ok) {
    host.counters.adminIgnored++;
    return;
  }
  const message = decoded.value;
  const variant = adminVariant(message) ?? 'unknown';
  host.counters.admin[variant] = (host.counters.admin[variant] ?? 0) + 1;
  host.emit('admin', message);
  const handler = ADMIN[variant];
  const call: AdminCall = {
    host,
    answer: (m) => {
      if (request.decoded?.want_response === true) host.reply(request, encodeAdminMessage({ ...m, session_passkey: host.passkey() }));
    },
    ignore: () => void host.counters.adminIgnored++,
    saved: (reboot, reason) => {
      if (reboot && !host.editing()) host.scheduleReboot(undefined, reason);
    },
  };
  if (handler) handler(call, message);
  else call.ignore();
}

// LoRa fields whose change makes AdminModule reboot (radio parameters); hop_limit, tx_enabled
// and the ignore lists apply without one.
const LORA_RADIO_FIELDS: readonly (keyof LoRaConfig)[] = [
  'use_preset', 'region', 'modem_preset', 'bandwidth', 'spread_factor', 'coding_rate', 'tx_power', 'frequency_offset', 'override_frequency',
  'channel_num', 'sx126x_rx_boosted_gain',
];

function setLora(call: AdminCall, next: LoRaConfig): void {
  const state = call.host.state();
  const old = loraOf(state);
  const lora: LoRaConfig = { ...next };
  // Setting a region on a node that had none also switches transmit on (?), as first-time
  // setup through an app relies on; a partial config without a region leaves it UNSET and
  // transmit off (docs 2.7).
  if (!old.region && lora.region && lora.region !== REGION_CODE.UNSET) lora.tx_enabled = true;
  state.config.set('lora', { lora });
  const changed = LORA_RADIO_FIELDS.some((k) => (old[k] ?? 0) !== (lora[k] ?? 0));
  call.host.emit('config', 'lora');
  call.saved(changed, 'set_config lora');
}

/** Handlers by AdminMessage variant; anything else is counted in counters.adminIgnored. */
const ADMIN: Partial<Record<string, AdminHandler>> = {
  get_owner_request: (c) => c.answer({ get_owner_response: { ...c.host.state().owner } }),
  get_config_request: (c, m) => {
    const key = CONFIG_KEYS[m.get_config_request!];
    const config = key ? c.host.state().config.get(key) : undefined;
    if (config) c.answer({ get_config_response: config });
    else c.ignore();
  },
  get_module_config_request: (c, m) => {
    const key = MODULE_KEYS[m.get_module_config_request!];
    const config = key ? c.host.state().modules.get(key) : undefined;
    if (config) c.answer({ get_module_config_response: config });
    else c.ignore();
  },
  get_channel_request: (c, m) => {
    // The request carries the index plus one (admin.proto).
    const channel = c.host.state().channels[m.get_channel_request! - 1];
    if (channel) c.answer({ get_channel_response: channel });
    else c.ignore();
  },
  get_device_metadata_request: (c) => c.answer({ get_device_metadata_response: c.host.metadata() }),
  set_owner: (c, m) => {
    const u = m.set_owner!;
    if (utf8Length(u.long_name) > LONG_NAME_MAX_BYTES || utf8Length(u.short_name) > SHORT_NAME_MAX_BYTES) {
      c.ignore(); // nanopb fails on the whole message: no change, no answer (docs 2.7)
      return;
    }
    const owner = c.host.state().owner;
    // AdminModule::handleSetOwner keeps a name the message leaves empty.
    if (u.long_name) owner.long_name = c.host.clampLongName(u.long_name);
    if (u.short_name) owner.short_name = u.short_name;
    owner.is_licensed = u.is_licensed === true;
    c.host.emit('owner', { ...owner });
    c.saved(false, 'set_owner');
  },
  set_config: (c, m) => {
    const config: Config = m.set_config!;
    const variant = configVariant(config);
    if (!variant) return c.ignore();
    if (variant === 'lora') return setLora(c, config.lora!);
    c.host.state().config.set(variant, { [variant]: config[variant] });
    c.host.emit('config', variant);
    c.saved(true, `set_config ${variant}`);
  },
  set_module_config: (c, m) => {
    const config = m.set_module_config!;
    const variant = moduleConfigVariant(config);
    if (!variant) return c.ignore();
    c.host.state().modules.set(variant, { [variant]: config[variant] });
    c.host.emit('module-config', variant);
    c.saved(true, `set_module_config ${variant}`);
  },
  set_channel: (c, m) => {
    const channel = m.set_channel!;
    const index = channel.index ?? 0;
    if (index < 0 || index >= CHANNEL_SLOTS) return c.ignore();
    c.host.state().channels[index] = { ...channel, index };
    c.saved(false, 'set_channel');
  },
  begin_edit_settings: (c) => c.host.setEditing(true),
  commit_edit_settings: (c) => {
    c.host.setEditing(false);
    c.host.scheduleReboot(undefined, 'commit_edit_settings');
  },
  reboot_seconds: (c, m) => {
    const s = m.reboot_seconds!;
    if (s < 0) c.host.cancelReboot();
    else c.host.scheduleReboot(s * 1000, 'reboot_seconds');
  },
};
