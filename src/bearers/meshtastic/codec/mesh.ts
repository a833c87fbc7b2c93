import { type DecodeResult, decodeMessage, defineMessage, encodeMessage, field, type MessageOf } from './proto.ts';

// mesh.proto packet messages: MeshPacket, its Data, and the ROUTING_APP payload
// (docs/protocols/meshtastic.md 2.3, 2.5). Property names are the proto field names; see
// proto.ts for the conventions.

// ---------------------------------------------------------------------------------------------
// Routing (ROUTING_APP payload: acks, naks, traceroute)

export const ROUTE_DISCOVERY = defineMessage('RouteDiscovery', {
  route: field.repeated(field.fixed32(1)), // mesh.proto RouteDiscovery.route = 1
  snr_towards: field.repeated(field.int32(2)), // mesh.proto RouteDiscovery.snr_towards = 2
  route_back: field.repeated(field.fixed32(3)), // mesh.proto RouteDiscovery.route_back = 3
  snr_back: field.repeated(field.int32(4)), // mesh.proto RouteDiscovery.snr_back = 4
});
export type RouteDiscovery = MessageOf<typeof ROUTE_DISCOVERY>;

const ROUTING_VARIANT = { oneof: 'variant' };

export const ROUTING = defineMessage('Routing', {
  route_request: field.message(1, ROUTE_DISCOVERY, ROUTING_VARIANT), // mesh.proto Routing.route_request = 1
  route_reply: field.message(2, ROUTE_DISCOVERY, ROUTING_VARIANT), // mesh.proto Routing.route_reply = 2
  /** ROUTING_ERROR; 0 (NONE) means delivered. */
  error_reason: field.enum(3, ROUTING_VARIANT), // mesh.proto Routing.error_reason = 3 (Routing.Error)
});
export type Routing = MessageOf<typeof ROUTING>;

// ---------------------------------------------------------------------------------------------
// Data and MeshPacket

/** mesh.proto Constants.DATA_PAYLOAD_LEN: most bytes Data.payload may carry. */
export const DATA_PAYLOAD_LEN = 233;

export const DATA = defineMessage('Data', {
  /** PORT_NUM. */
  portnum: field.enum(1), // mesh.proto Data.portnum = 1 (PortNum)
  /** At most DATA_PAYLOAD_LEN (233) bytes. */
  payload: field.bytes(2), // mesh.proto Data.payload = 2
  want_response: field.bool(3), // mesh.proto Data.want_response = 3
  dest: field.fixed32(4), // mesh.proto Data.dest = 4
  source: field.fixed32(5), // mesh.proto Data.source = 5
  /** The id of the packet this one answers (acks carry the acked packet's id here). */
  request_id: field.fixed32(6), // mesh.proto Data.request_id = 6
  reply_id: field.fixed32(7), // mesh.proto Data.reply_id = 7
  emoji: field.fixed32(8), // mesh.proto Data.emoji = 8
  bitfield: field.uint32(9, { optional: true }), // mesh.proto Data.bitfield = 9
  xeddsa_signature: field.bytes(10), // mesh.proto Data.xeddsa_signature = 10
});
export type Data = MessageOf<typeof DATA>;

const PAYLOAD_VARIANT = { oneof: 'payload_variant' };

export const MESH_PACKET = defineMessage('MeshPacket', {
  from: field.fixed32(1), // mesh.proto MeshPacket.from = 1
  /** BROADCAST (0xffffffff) for everyone. */
  to: field.fixed32(2), // mesh.proto MeshPacket.to = 2
  /** For API clients: the channel index. */
  channel: field.uint32(3), // mesh.proto MeshPacket.channel = 3
  decoded: field.message(4, DATA, PAYLOAD_VARIANT), // mesh.proto MeshPacket.decoded = 4
  encrypted: field.bytes(5, PAYLOAD_VARIANT), // mesh.proto MeshPacket.encrypted = 5
  /** Non-zero when an ack or answer is wanted (docs/protocols/meshtastic.md 2.5). */
  id: field.fixed32(6), // mesh.proto MeshPacket.id = 6
  rx_time: field.fixed32(7, { optional: true }), // mesh.proto MeshPacket.rx_time = 7
  rx_snr: field.float(8), // mesh.proto MeshPacket.rx_snr = 8
  hop_limit: field.uint32(9), // mesh.proto MeshPacket.hop_limit = 9
  want_ack: field.bool(10), // mesh.proto MeshPacket.want_ack = 10
  /** PRIORITY. */
  priority: field.enum(11), // mesh.proto MeshPacket.priority = 11 (MeshPacket.Priority)
  rx_rssi: field.int32(12, { optional: true }), // mesh.proto MeshPacket.rx_rssi = 12
  delayed: field.enum(13), // mesh.proto MeshPacket.delayed = 13 (deprecated)
  via_mqtt: field.bool(14), // mesh.proto MeshPacket.via_mqtt = 14
  hop_start: field.uint32(15), // mesh.proto MeshPacket.hop_start = 15
  public_key: field.bytes(16), // mesh.proto MeshPacket.public_key = 16
  pki_encrypted: field.bool(17), // mesh.proto MeshPacket.pki_encrypted = 17
  next_hop: field.uint32(18), // mesh.proto MeshPacket.next_hop = 18
  relay_node: field.uint32(19), // mesh.proto MeshPacket.relay_node = 19
  tx_after: field.uint32(20), // mesh.proto MeshPacket.tx_after = 20
  /** TRANSPORT_MECHANISM. */
  transport_mechanism: field.enum(21), // mesh.proto MeshPacket.transport_mechanism = 21
  xeddsa_signed: field.bool(22), // mesh.proto MeshPacket.xeddsa_signed = 22
});
export type MeshPacket = MessageOf<typeof MESH_PACKET>;


export const encodeRouting = (m: Routing): Uint8Array => encodeMessage(ROUTING, m);
export const decodeRouting = (b: Uint8Array): DecodeResult<Routing> => decodeMessage(ROUTING, b);
export const encodeRouteDiscovery = (m: RouteDiscovery): Uint8Array => encodeMessage(ROUTE_DISCOVERY, m);
export const decodeRouteDiscovery = (b: Uint8Array): DecodeResult<RouteDiscovery> => decodeMessage(ROUTE_DISCOVERY, b);
export const encodeData = (m: Data): Uint8Array => encodeMessage(DATA, m);
export const decodeData = (b: Uint8Array): DecodeResult<Data> => decodeMessage(DATA, b);
export const encodeMeshPacket = (m: MeshPacket): Uint8Array => encodeMessage(MESH_PACKET, m);
export const decodeMeshPacket = (b: Uint8Array): DecodeResult<MeshPacket> => decodeMessage(MESH_PACKET, b);
