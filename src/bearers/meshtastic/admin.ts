import {
  MODEM_PRESET, nameOf, REGION_CODE, valueOf,
  type AdminMessage, type Channel, type LoRaConfig, type ModuleConfig, type PositionConfig, type User,
} from './codec/messages.ts';

// The bridge's radio, owner and module sections against what the device reported
// (docs/meshtastic.md, "What the configuration API changes on the device"). Pure: says what
// differs and builds the AdminMessages that change it. A variant is always sent whole, as the
// device reported it with only the differing fields changed: set_config replaces the whole
// variant, and a partial LoRa config would leave the region UNSET and the transmitter off.

/** What the device holds, from its handshake. */
export interface DeviceSettings {
  owner?: User;
  lora?: LoRaConfig;
  position?: PositionConfig;
  /** Module variants the device reported, by name. */
  modules: Partial<Record<ModuleVariant, Record<string, unknown>>>;
  /** The channel table (index 0 the primary). */
  channels?: Channel[];
}

/** Firmware module variants the bridge's `modules` section maps onto, field for field. */
export const MODULE_VARIANTS = ['telemetry', 'store_forward', 'range_test', 'neighbor_info', 'canned_message'] as const;
export type ModuleVariant = (typeof MODULE_VARIANTS)[number];
// Fields of the bridge's sections that are ours, not the firmware's.
const NOT_ON_DEVICE: Record<string, readonly string[]> = { canned_message: ['messages'] };

/** The radio section as the device reports it (field names of the bridge's `radio` section). */
export function radioReport(lora: LoRaConfig): Record<string, unknown> {
  return {
    region: nameOf(REGION_CODE, lora.region ?? 0),
    modem_preset: nameOf(MODEM_PRESET, lora.modem_preset ?? 0),
    channel_num: lora.channel_num ?? 0,
    hop_limit: lora.hop_limit ?? 0,
    tx_power: lora.tx_power ?? 0,
  };
}

export function ownerReport(user: User): Record<string, unknown> {
  return { long_name: user.long_name ?? '', short_name: user.short_name ?? '' };
}

export interface Change {
  /** Dotted names of the fields that differ, e.g. "radio.region". */
  fields: string[];
  /** The AdminMessages that apply them (without begin/commit). */
  messages: AdminMessage[];
}

/** Differences in the radio section; null when none or the device reported no LoRa config. */
export function loraChange(desired: Record<string, unknown>, lora: LoRaConfig | undefined): Change | null {
  if (!lora) return null;
  const want = {
    region: valueOf(REGION_CODE, String(desired.region)),
    modem_preset: valueOf(MODEM_PRESET, String(desired.modem_preset)),
    channel_num: desired.channel_num as number,
    hop_limit: desired.hop_limit as number,
    tx_power: desired.tx_power as number,
  };
  const fields = (Object.keys(want) as Array<keyof typeof want>).filter((k) => want[k] !== undefined && want[k] !== (lora[k] ?? 0));
  if (fields.length === 0) return null;
  const next: LoRaConfig = { ...lora };
  for (const k of fields) next[k] = want[k];
  next.use_preset = true;
  // The bridge configures a radio to talk: a region set means the transmitter on.
  if (next.region !== REGION_CODE.UNSET) next.tx_enabled = true;
  return { fields: fields.map((f) => `radio.${f}`), messages: [{ set_config: { lora: next } }] };
}

/** Differences in the owner section; null when none. */
export function ownerChange(desired: Record<string, unknown>, owner: User | undefined): Change | null {
  const long = String(desired.long_name);
  const short = String(desired.short_name);
  const fields = [
    ...(long !== (owner?.long_name ?? '') ? ['owner.long_name'] : []),
    ...(short !== (owner?.short_name ?? '') ? ['owner.short_name'] : []),
  ];
  if (fields.length === 0) return null;
  return { fields, messages: [{ set_owner: { ...owner, long_name: long, short_name: short } }] };
}

/** Differences in module settings the device reported; modules it did not report are left
 *  alone (a variant built from our fields alone would reset the rest to defaults). */
export function moduleChanges(desired: Record<string, unknown>, device: DeviceSettings): Change | null {
  const fields: string[] = [];
  const messages: AdminMessage[] = [];
  for (const variant of MODULE_VARIANTS) {
    const reported = device.modules[variant];
    const wanted = desired[variant] as Record<string, unknown> | undefined;
    if (!reported || !wanted) continue;
    const differ = changedFields(wanted, reported, NOT_ON_DEVICE[variant] ?? []);
    if (differ.length === 0) continue;
    fields.push(...differ.map((f) => `modules.${variant}.${f}`));
    const next = { ...reported };
    for (const f of differ) next[f] = wanted[f];
    messages.push({ set_module_config: { [variant]: next } as ModuleConfig });
  }
  const position = desired.position as Record<string, unknown> | undefined;
  const precision = position ? precisionChange(position.position_precision, device.channels) : null;
  if (precision) {
    fields.push('modules.position.position_precision');
    messages.push(precision);
  }
  if (position && device.position) {
    const differ = changedFields(position, device.position as Record<string, unknown>, ['position_precision']);
    if (differ.length > 0) {
      fields.push(...differ.map((f) => `modules.position.${f}`));
      const next = { ...device.position } as Record<string, unknown>;
      for (const f of differ) next[f] = position[f];
      messages.push({ set_config: { position: next as PositionConfig } });
    }
  }
  return fields.length > 0 ? { fields, messages } : null;
}

/** Position sharing lives in the primary channel's ModuleSettings.position_precision (0 = no
 *  position broadcast, Meshtastic 2.8's default; docs/protocols/meshtastic.md 2.9): the whole
 *  channel as reported, with only that changed. Null when not wanted (null) or already so. */
function precisionChange(wanted: unknown, channels: Channel[] | undefined): AdminMessage | null {
  if (typeof wanted !== 'number') return null;
  const primary = channels?.find((c) => (c.index ?? 0) === 0);
  if (!primary || (primary.settings?.module_settings?.position_precision ?? 0) === wanted) return null;
  const settings = { ...primary.settings, module_settings: { ...primary.settings?.module_settings, position_precision: wanted } };
  return { set_channel: { ...primary, index: 0, settings } };
}

/** Our fields whose value differs from the device's (a field the device left out is its zero). */
function changedFields(wanted: Record<string, unknown>, reported: Record<string, unknown>, skip: readonly string[]): string[] {
  return Object.keys(wanted).filter((f) => {
    if (skip.includes(f)) return false;
    const w = wanted[f];
    if (typeof w !== 'number' && typeof w !== 'boolean') return false;
    const zero = typeof w === 'number' ? 0 : false;
    return (reported[f] ?? zero) !== w;
  });
}

/** The messages of one edit: begin, the changes, commit (the device saves and reboots once). */
export function editSession(changes: Change[]): AdminMessage[] {
  return [{ begin_edit_settings: true }, ...changes.flatMap((c) => c.messages), { commit_edit_settings: true }];
}
