import { z } from 'zod';
import { reportedNumber as num } from '../shared/stats-fields.ts';
import { RNODE_MODES, RNODE_PRESETS, bitrateBps, resolveRadioSettings, rnodeSettingsSchema } from './radio.ts';
import { storedEndpointFacts } from './lxmf/endpoint.ts';
import { ADMIN, ANY_KEY, route, type Route } from '../../http/route.ts';
import type { DriverApi, DriverInterface, StatsView } from '../driver-module.ts';

// The long-range radio node endpoints (docs/api.md 4.8), served by the RNode driver module: presets, serial ports (listed from udev;
// nothing is probed), the RNode interfaces' radio settings, and every reported value of
// docs/api.md 2.7 with its unit in the field name and the schema.

const Preset = z.object({
  name: z.string(),
  frequency_hz: z.number().int().describe('Hz'),
  bandwidth_hz: z.number().int().describe('Hz'),
  sf: z.number().int().describe('Spreading factor'),
  cr: z.number().int().describe('Coding rate 4/cr'),
  tx_power_dbm: z.number().int().describe('dBm'),
});

const Port = z.object({
  path: z.string().describe('Kernel device node'),
  by_id: z.string().nullable().describe('/dev/serial/by-id link, stable across replugging'),
  serial_number: z.string().nullable().describe('USB serial number'),
  vid_pid: z.string().nullable().describe('USB vendor:product id, lower-case hex'),
  manufacturer: z.string().nullable(),
  product: z.string().nullable(),
  port: z.string().describe('The port value to bind an interface with'),
  label: z.string(),
});

const RNodeReported = z.object({
  frequency_hz: num('Frequency the radio reports, Hz'),
  bandwidth_hz: num('Bandwidth the radio reports, Hz'),
  sf: num('Spreading factor the radio reports'),
  cr: num('Coding rate the radio reports (5..8 = 4/5..4/8)'),
  tx_power_dbm: num('Transmit power the radio reports, dBm'),
  radio_on: z.boolean().describe('Radio state the radio reports'),
  st_alock_pct: num('Short-term airtime limit the radio took, percent'),
  lt_alock_pct: num('Long-term airtime limit the radio took, percent'),
  last_rssi_dbm: num('RSSI of the last received frame, dBm'),
  last_snr_db: num('SNR of the last received frame, dB'),
  airtime_short_pct: num('Own airtime over the last ~15 s, percent (firmware)'),
  airtime_long_pct: num('Own airtime over the last hour, percent (firmware)'),
  channel_load_short_pct: num('Channel load over the last ~15 s, percent'),
  channel_load_long_pct: num('Channel load over the last hour, percent'),
  bitrate_bps: z.number().describe('Derived bit rate used for the announce budget, bit/s (SF x 4/CR / (2^SF / BW kHz) x 1000)'),
  mode: z.enum(RNODE_MODES).describe('raw: one LoRa frame per message; reticulum: an LXMF endpoint (docs/reticulum.md)'),
  reticulum: z.object({
    lxmf_address: z.string().describe('The LXMF address to message this bridge at (32 hex digits)'),
    identity_hash: z.string().describe('The Reticulum identity hash (32 hex digits)'),
    display_name: z.string().describe('The name announced with the address'),
    last_announce_at: z.string().nullable().describe('When the last announce went out (this run)'),
    peers_known: z.number().int().describe('LXMF peers whose announce was heard, in memory'),
    proofs_waiting: z.number().int().describe('Messages sent and waiting for their delivery proof'),
    links: z.array(z.object({
      id: z.string().describe('The link id (32 hex digits)'),
      direction: z.enum(['in', 'out']).describe('in: a peer opened it to the bridge; out: the bridge opened it to deliver'),
      state: z.enum(['pending', 'handshake', 'active', 'stale', 'closed']).describe('Reticulum link state'),
      peer: z.string().nullable().describe('The LXMF address at the other end, when known (ours to it, or an initiator that identified)'),
      rtt_ms: z.number().nullable().describe('Round-trip time measured at establishment'),
      age_s: z.number().nullable().describe('Seconds since it became active'),
      last_inbound_s: z.number().describe('Seconds since the last packet on it'),
    })).optional().describe('Reticulum links open now (docs/reticulum.md, "Links")'),
    propagation_node: z.string().optional().describe('The propagation node set (propagation_node), its destination hash'),
    propagation_node_known: z.boolean().optional().describe('Its announce (cost and limits) has been heard'),
    propagation_node_name: z.string().nullable().optional().describe('The name the node announced'),
    propagation_stamp_cost: z.number().nullable().optional().describe('The stamp cost the node asks for'),
    propagation_transfer_limit_kb: z.number().nullable().optional().describe('The largest message the node takes, KB'),
    propagation_last_sync_at: z.string().nullable().optional().describe('When the last sync with the node ended'),
    propagation_last_sync_error: z.string().nullable().optional().describe('Why the last sync failed, or null'),
  }).catchall(z.number()).nullable().describe('reticulum mode: the endpoint and its counters (announces, packets, proofs, bad signatures, undecryptable packets); null in raw mode'),
});

/** Every reported value of an RNode interface (docs/api.md, "RNode endpoints"), as the radio
 *  reported it; null until it has. */
export const rnodeStats: StatsView<z.infer<typeof RNodeReported>> = {
  schema: RNodeReported,
  read(s, settings, state) {
    const r = resolveRadioSettings(settings);
    const mode = r.ok ? r.settings.mode : 'raw';
    type Endpoint = z.infer<typeof RNodeReported>['reticulum'];
    const running = typeof s.reticulum === 'object' && s.reticulum !== null ? (s.reticulum as Endpoint) : null;
    const pick = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : null);
    return {
      frequency_hz: pick('frequency_hz'), bandwidth_hz: pick('bandwidth_hz'), sf: pick('sf'), cr: pick('cr'), tx_power_dbm: pick('tx_power_dbm'),
      radio_on: s.radio_on === true, st_alock_pct: pick('st_alock_pct'), lt_alock_pct: pick('lt_alock_pct'),
      last_rssi_dbm: pick('last_rssi_dbm'), last_snr_db: pick('last_snr_db'),
      airtime_short_pct: pick('airtime_short_pct'), airtime_long_pct: pick('airtime_long_pct'),
      channel_load_short_pct: pick('channel_load_short_pct'), channel_load_long_pct: pick('channel_load_long_pct'),
      bitrate_bps: pick('bitrate_bps') ?? (r.ok ? bitrateBps(r.settings.sf, r.settings.bandwidth_hz, r.settings.cr) : 0),
      mode,
      // While the interface is stopped the address is read from what the driver keeps.
      reticulum: mode !== 'reticulum' ? null : (running ?? (r.ok && state ? (storedEndpointFacts(state, r.settings.display_name) as Endpoint) : null)),
    };
  },
};

const Stats = z.object({
  id: z.string(),
  name: z.string(),
  connected: z.boolean(),
  phase: z.string(),
  last_error: z.string().nullable(),
  ...RNodeReported.shape,
});

const RNodeInterface = z.object({
  id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  device: z.string().nullable(),
  settings: rnodeSettingsSchema,
  effective: z
    .object({ frequency_hz: z.number(), bandwidth_hz: z.number(), sf: z.number(), cr: z.number(), tx_power_dbm: z.number(), bitrate_bps: z.number().describe('bit/s') })
    .nullable()
    .describe('The five radio fields after the preset filled them (null when the settings are incomplete)'),
});

const Ref = z.object({ id: z.string().min(1).describe('Interface id or name') });

export function rnodeRoutes(interfaces: DriverApi): Route[] {
  const tags = ['routing'];
  const view = (row: DriverInterface) => {
    const r = resolveRadioSettings(row.settings);
    return {
      id: row.id,
      name: row.name,
      enabled: row.enabled,
      device: row.device,
      settings: row.settings,
      effective: r.ok
        ? { frequency_hz: r.settings.frequency_hz, bandwidth_hz: r.settings.bandwidth_hz, sf: r.settings.sf, cr: r.settings.cr, tx_power_dbm: r.settings.tx_power_dbm, bitrate_bps: bitrateBps(r.settings.sf, r.settings.bandwidth_hz, r.settings.cr) }
        : null,
    };
  };
  return [
    route({
      method: 'GET', path: '/api/routing/rnode/presets', summary: 'The RNode radio presets (docs/api.md 2.7)', tags, roles: ANY_KEY,
      response: z.object({ items: z.array(Preset) }), responseName: 'RNodePresetList',
      handler: () => ({ items: RNODE_PRESETS.map((p) => ({ name: p.name, frequency_hz: p.frequency_hz, bandwidth_hz: p.bandwidth_hz, sf: p.sf, cr: p.cr, tx_power_dbm: p.tx_power_dbm })) }),
    }),
    route({
      method: 'GET', path: '/api/routing/rnode/ports', summary: 'Serial ports and bonded Bluetooth LE boards, with labels and the port value to use; probes nothing', tags, roles: ANY_KEY,
      response: z.object({ items: z.array(Port) }), responseName: 'SerialPortList',
      handler: async () => ({ items: await interfaces.listPorts() }),
    }),
    route({
      method: 'GET', path: '/api/routing/ifaces', summary: 'RNode interfaces and their radio settings', tags, roles: ANY_KEY,
      response: z.object({ items: z.array(RNodeInterface) }), responseName: 'RNodeInterfaceList',
      handler: () => ({ items: interfaces.list().map(view) }),
    }),
    route({
      method: 'GET', path: '/api/routing/ifaces/{id}', summary: 'One RNode interface', tags, roles: ANY_KEY, params: Ref,
      response: RNodeInterface, responseName: 'RNodeInterface',
      handler: ({ params }) => view(interfaces.get(params.id)),
    }),
    route({
      method: 'PUT', path: '/api/routing/ifaces/{id}', summary: 'Replace an RNode interface\'s radio settings; the radio is configured again', tags, roles: ADMIN, params: Ref,
      body: z.strictObject({ settings: rnodeSettingsSchema }), bodyName: 'ReplaceRNodeSettings', response: RNodeInterface, responseName: 'RNodeInterface',
      handler: async ({ params, body }) => view(await interfaces.replaceSettings(params.id, body.settings)),
    }),
    route({
      method: 'GET', path: '/api/routing/ifaces/{id}/stats', summary: 'Every reported value of docs/api.md 2.7, as the radio reported it', tags, roles: ANY_KEY, params: Ref,
      response: Stats, responseName: 'RNodeStats',
      handler: ({ params }) => {
        const row = interfaces.get(params.id);
        const link = interfaces.link(row.id);
        return { id: row.id, name: row.name, connected: link.connected, phase: link.phase, last_error: link.last_error, ...rnodeStats.read(interfaces.stats(row.id), row.settings) };
      },
    }),
  ];
}
