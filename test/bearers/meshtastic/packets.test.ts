import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OutboundFrame } from '../../../src/bearers/bearer.ts';
import { decodePosition, decodeTelemetry, encodePosition, encodeTelemetry, encodeUser, PORT_NUM, ROUTING_ERROR, type MeshPacket } from '../../../src/bearers/meshtastic/codec/messages.ts';
import { inboundPacket, liveBoardTime } from '../../../src/bearers/meshtastic/inbound.ts';
import { isRetryableRoutingError, outboundPacket, routingErrorName } from '../../../src/bearers/meshtastic/outbound.ts';

// What packets become (docs/meshtastic.md, "Receiving" and "Sending"): every port number the
// bridge treats on its own, addresses in every form, and every kind of packet it refuses.

const enc = (s: string) => new TextEncoder().encode(s);
const packet = (over: Partial<MeshPacket> = {}): MeshPacket => ({
  from: 0xa1b2c3d4, to: 0xffffffff, channel: 1, id: 0x1234, rx_snr: 6.25, rx_rssi: -80, hop_limit: 2, hop_start: 3, rx_time: 1_767_225_600,
  decoded: { portnum: PORT_NUM.TEXT_MESSAGE_APP, payload: enc('hi') },
  ...over,
});

test('a text packet: kind text, node ids as !hex, broadcast as ^all, link facts in meta, and a dedupe key of sender and id', () => {
  const r = inboundPacket(packet());
  if (r.type !== 'frame') throw new Error(r.type);
  assert.equal(r.frame, {
    from: '!a1b2c3d4', to: '^all', channel: 1, kind: 'text', text: 'hi', payload: enc('hi'),
    meta: { packet_id: 0x1234, portnum: 1, port: 'TEXT_MESSAGE_APP', rx_snr_db: 6.25, rx_rssi_dbm: -80, hops_taken: 1, via_mqtt: false },
    dedupeKey: 'meshtastic:!a1b2c3d4:4660',
  });
  assert.equal(r.nodes, [{ id: '!a1b2c3d4', num: 0xa1b2c3d4, snr_db: 6.25, hops_away: 1, via_mqtt: false, last_heard_at: '2026-01-01T00:00:00.000Z' }]);
  const direct = inboundPacket(packet({ to: 0x0000beef, id: 0 }));
  assert.ok(direct.type === 'frame' && direct.frame.to === '!0000beef');
  assert.ok(direct.type === 'frame' && direct.frame.dedupeKey === undefined, 'id 0 cannot be told apart: no key');
});

test('a position packet: degrees and metres in meta and as JSON, and the node\'s position', () => {
  const r = inboundPacket(packet({ decoded: { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ latitude_i: -337_500_000, longitude_i: 1_512_000_000, altitude: 42, time: 1_767_225_600 }) } }));
  if (r.type !== 'frame') throw new Error(r.type);
  assert.is(r.frame.kind, 'position');
  const position = { latitude: -33.75, longitude: 151.2, altitude_m: 42, time: '2026-01-01T00:00:00.000Z' };
  assert.equal(JSON.parse(new TextDecoder().decode(r.frame.payload!)), position);
  assert.is(r.frame.meta.latitude, -33.75);
  assert.equal(r.nodes[0].position, position);
  const noFix = inboundPacket(packet({ decoded: { portnum: PORT_NUM.POSITION_APP, payload: encodePosition({ time: 5 }) } }));
  assert.ok(noFix.type === 'frame' && noFix.frame.kind === 'data', 'a position without a fix is kept as data');
});

test('telemetry with device metrics is kind telemetry; other telemetry, node info and unknown ports are data', () => {
  const t = inboundPacket(packet({ decoded: { portnum: PORT_NUM.TELEMETRY_APP, payload: encodeTelemetry({ time: 1_767_225_600, device_metrics: { battery_level: 87, channel_utilization: 12.5, air_util_tx: 1.25, uptime_seconds: 3600 } }) } }));
  if (t.type !== 'frame') throw new Error(t.type);
  assert.is(t.frame.kind, 'telemetry');
  assert.equal(JSON.parse(new TextDecoder().decode(t.frame.payload!)), { battery_level_pct: 87, channel_utilization_pct: 12.5, air_util_tx_pct: 1.25, uptime_s: 3600, time: '2026-01-01T00:00:00.000Z' });
  const info = inboundPacket(packet({ decoded: { portnum: PORT_NUM.NODEINFO_APP, payload: encodeUser({ id: '!a1b2c3d4', long_name: 'Ridge', short_name: 'RDG' }) } }));
  assert.ok(info.type === 'frame' && info.frame.kind === 'data' && info.nodes[0].long_name === 'Ridge' && info.nodes[0].role === 'CLIENT');
  const unknown = inboundPacket(packet({ decoded: { portnum: 300, payload: new Uint8Array([1, 2, 3]) } }));
  assert.ok(unknown.type === 'frame' && unknown.frame.kind === 'data' && unknown.unknownPort && unknown.frame.meta.portnum === 300);
});

test('acks and admin answers go to the driver, encrypted and empty packets are not stored', () => {
  assert.is(inboundPacket(packet({ decoded: { portnum: PORT_NUM.ROUTING_APP, payload: new Uint8Array([0x18, 0x00]), request_id: 7 } })).type, 'routing');
  assert.is(inboundPacket(packet({ decoded: { portnum: PORT_NUM.ADMIN_APP, payload: new Uint8Array() } })).type, 'admin');
  assert.equal(inboundPacket(packet({ decoded: undefined, encrypted: new Uint8Array([9, 9]) })), { type: 'skip', reason: 'encrypted' });
  assert.equal(inboundPacket(packet({ decoded: undefined })), { type: 'skip', reason: 'empty' });
});

const frame = (over: Partial<OutboundFrame> = {}): OutboundFrame => ({ deliveryId: 'd', messageId: 'm', to: '!0000beef', channel: null, kind: 'text', text: 'hi', payload: enc('hi'), ...over });
const opts = { id: 99, channel: 2, hopLimit: 3 };

test('outbound: every address form, the interface channel when the delivery names none, want_ack always', () => {
  for (const [to, num] of [['!0000beef', 0xbeef], ['0x0000BEEF', 0xbeef], ['48879', 0xbeef], ['^all', 0xffffffff], ['broadcast', 0xffffffff]] as const) {
    const r = outboundPacket(frame({ to }), opts);
    assert.ok(r.ok, to);
    if (r.ok) {
      assert.is(r.packet.to, num, to);
      assert.is(r.broadcast, num === 0xffffffff);
      assert.equal({ id: r.packet.id, channel: r.packet.channel, hop_limit: r.packet.hop_limit, want_ack: r.packet.want_ack, port: r.packet.decoded?.portnum }, { id: 99, channel: 2, hop_limit: 3, want_ack: true, port: PORT_NUM.TEXT_MESSAGE_APP });
    }
  }
  const onOne = outboundPacket(frame({ channel: 0 }), opts);
  assert.ok(onOne.ok && onOne.packet.channel === 0, 'the delivery\'s channel wins');
});

test('outbound: positions and telemetry go back into their protobufs; other data as PRIVATE_APP; bad input refused for good', () => {
  const pos = outboundPacket(frame({ kind: 'position', text: null, payload: enc(JSON.stringify({ latitude: -33.75, longitude: 151.2, altitude_m: 42 })) }), opts);
  assert.ok(pos.ok && pos.packet.decoded?.portnum === PORT_NUM.POSITION_APP);
  if (pos.ok) assert.equal(decodePosition(pos.packet.decoded!.payload!), { ok: true, value: { latitude_i: -337_500_000, longitude_i: 1_512_000_000, altitude: 42 }, unknown: [] });
  const tel = outboundPacket(frame({ kind: 'telemetry', text: null, payload: enc(JSON.stringify({ battery_level_pct: 50 })) }), opts);
  if (tel.ok) assert.equal(decodeTelemetry(tel.packet.decoded!.payload!).ok && (decodeTelemetry(tel.packet.decoded!.payload!) as { value: { device_metrics: unknown } }).value.device_metrics, { battery_level: 50 });
  const raw = outboundPacket(frame({ kind: 'data', text: null, payload: new Uint8Array([1, 2]) }), opts);
  assert.ok(raw.ok && raw.packet.decoded?.portnum === PORT_NUM.PRIVATE_APP);
  for (const to of ['', 'bob', '!xyz', '0x1234567890', '4294967296', '!']) {
    const r = outboundPacket(frame({ to }), opts);
    assert.ok(!r.ok && r.error.startsWith('ERR_MESHTASTIC_ADDRESS'), `${JSON.stringify(to)} refused`);
  }
  const big = outboundPacket(frame({ payload: new Uint8Array(234) }), opts);
  assert.ok(!big.ok && /234 bytes is more than the 233/.test(big.error));
  assert.ok(outboundPacket(frame({ payload: new Uint8Array(233) }), opts).ok, '233 bytes fit');
});

test('routing errors: their names, and which a later attempt may cure', () => {
  assert.is(routingErrorName(ROUTING_ERROR.MAX_RETRANSMIT), 'MAX_RETRANSMIT');
  for (const e of ['NO_ROUTE', 'GOT_NAK', 'TIMEOUT', 'NO_INTERFACE', 'MAX_RETRANSMIT', 'NO_RESPONSE', 'DUTY_CYCLE_LIMIT', 'RATE_LIMIT_EXCEEDED'] as const) assert.ok(isRetryableRoutingError(ROUTING_ERROR[e]), e);
  for (const e of ['NO_CHANNEL', 'TOO_LARGE', 'BAD_REQUEST', 'NOT_AUTHORIZED', 'PKI_FAILED', 'PKI_UNKNOWN_PUBKEY', 'PKI_SEND_FAIL_PUBLIC_KEY'] as const) assert.not.ok(isRetryableRoutingError(ROUTING_ERROR[e]), e);
});

test('board time: only a packet heard over the air with a stamped rx_time tells the board\'s time', () => {
  const live = { from: 0x1234, to: 0xffffffff, id: 7, rx_time: 1_795_867_202, rx_snr: 6.25, rx_rssi: -80 };
  assert.is(liveBoardTime(live), 1_795_867_202_000);
  // A board with no time stamps 0 (getValidTime below RTCQualityFromNet).
  assert.is(liveBoardTime({ ...live, rx_time: 0 }), null);
  assert.is(liveBoardTime({ ...live, rx_time: undefined }), null);
  // A 2.8 board's replayed record: broadcast, rx_time the record's time, no RSSI (issue 32).
  assert.is(liveBoardTime({ from: 0x1234, to: 0xffffffff, id: 8, rx_time: 1_795_000_000, priority: 10 }), null);
  assert.is(liveBoardTime({ ...live, rx_rssi: 0 }), null);
  // Over MQTT, not the air.
  assert.is(liveBoardTime({ ...live, via_mqtt: true }), null);
});

test.run();
